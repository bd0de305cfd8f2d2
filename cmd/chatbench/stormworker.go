package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The storm's clients live in worker processes (`chatbench storm-worker`, this
// executable again): a process may hold 20,000 open files here, hard, and the
// storm's size is the number of sockets. The parent sends a worker its job as
// one JSON line on stdin; the worker dials nothing yet and answers "ready";
// the parent sends the start time once every worker is ready, so all connects
// begin together; the worker dials every client at that instant and answers
// its report as one JSON line; it holds the sockets until stdin closes.

// stormClient is one device of the storm: the node it connects to and its token.
type stormClient struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

type stormJob struct {
	Clients      []stormClient `json:"clients"`
	HelloTimeout time.Duration `json:"hello_timeout"` // a client without its hello this long after the start has failed
}

type stormStart struct {
	AtUnixNano int64 `json:"at_unix_nano"`
}

// stormReport is what workers measured: one worker's, or the sum of them all.
type stormReport struct {
	Workers  int               `json:"workers"`
	CPU      float64           `json:"cpu_s"`          // the workers' user+system seconds, from their start to their report
	HelloMs  []float64         `json:"hello_ms"`       // per connected client: the start → its hello
	Errors   map[string]int    `json:"errors"`         // clients that failed, by kind (errorKind)
	Examples map[string]string `json:"error_examples"` // one message per kind
}

func (r *stormReport) add(o stormReport) {
	r.Workers += o.Workers
	r.CPU += o.CPU
	r.HelloMs = append(r.HelloMs, o.HelloMs...)
	for k, n := range o.Errors {
		if r.Errors == nil {
			r.Errors, r.Examples = map[string]int{}, map[string]string{}
		}
		r.Errors[k] += n
		if _, ok := r.Examples[k]; !ok {
			r.Examples[k] = o.Examples[k]
		}
	}
}

func (r *stormReport) failed() int {
	n := 0
	for _, c := range r.Errors {
		n += c
	}
	return n
}

var httpStatus = regexp.MustCompile(`status code 101 but got (\d+)`)

// errorKind names why a client did not get its hello, coarsely enough that
// 20,000 failures sum to a few lines.
func errorKind(err error) string {
	var errno syscall.Errno
	var ne net.Error
	msg := err.Error()
	switch {
	case errors.As(err, &errno) && errno == syscall.ECONNREFUSED:
		return "connection refused"
	case errors.As(err, &errno) && errno == syscall.ECONNRESET:
		return "connection reset"
	case errors.As(err, &errno) && errno == syscall.EADDRNOTAVAIL:
		return "no local port"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), strings.Contains(msg, "server closed idle connection"):
		return "closed by the server"
	case strings.Contains(msg, "first frame is"):
		return "first frame not hello"
	}
	if m := httpStatus.FindStringSubmatch(msg); m != nil {
		return "upgrade refused: HTTP " + m[1]
	}
	return "other"
}

// stormWorker is `chatbench storm-worker`: one worker's side of the exchange above.
func stormWorker(stdin io.Reader, stdout io.Writer) error {
	raiseFileLimit()
	in := bufio.NewReader(stdin)
	var job stormJob
	if err := readJSONLine(in, &job); err != nil {
		return fmt.Errorf("read the job: %w", err)
	}
	d := newDialer(len(job.Clients))
	d.helloWait = job.HelloTimeout
	if _, err := fmt.Fprintln(stdout, "ready"); err != nil {
		return err
	}
	var start stormStart
	if err := readJSONLine(in, &start); err != nil {
		return fmt.Errorf("read the start: %w", err)
	}
	at := time.Unix(0, start.AtUnixNano)
	ctx, cancel := context.WithDeadline(context.Background(), at.Add(job.HelloTimeout))
	defer cancel()

	conns := make([]*wsConn, len(job.Clients))
	hello := make([]time.Duration, len(job.Clients))
	errs := make([]error, len(job.Clients))
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range job.Clients {
		wg.Go(func() {
			<-gate
			conns[i], errs[i] = d.dial(ctx, c.URL, c.Token)
			hello[i] = time.Since(at)
		})
	}
	time.Sleep(time.Until(at))
	close(gate)
	wg.Wait()
	defer closeAll(conns)

	rep := stormReport{Workers: 1, HelloMs: make([]float64, 0, len(conns))}
	for i, err := range errs {
		if err == nil {
			rep.HelloMs = append(rep.HelloMs, float64(hello[i])/1e6)
			continue
		}
		rep.add(stormReport{Errors: map[string]int{errorKind(err): 1}, Examples: map[string]string{errorKind(err): err.Error()}})
	}
	rep.CPU = selfCPU()
	if err := json.NewEncoder(stdout).Encode(rep); err != nil {
		return err
	}
	// The sockets stay open until the parent has read the registry.
	_, err := io.Copy(io.Discard, in)
	return err
}

func readJSONLine(r *bufio.Reader, v any) error {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return err
	}
	return json.Unmarshal(line, v)
}

// stormFleet is the parent's side: the worker processes holding the clients.
type stormFleet struct {
	workers []*stormWorkerProc
}

type stormWorkerProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startStormWorkers splits clients over as many workers (exe storm-worker) as
// hold at most perWorker each, and returns once every worker has its job and
// is ready to dial.
func startStormWorkers(exe string, clients []stormClient, perWorker int, helloTimeout time.Duration) (*stormFleet, error) {
	if perWorker < 1 {
		return nil, fmt.Errorf("clients per worker: want at least 1, not %d", perWorker)
	}
	f := &stormFleet{}
	for lo := 0; lo < len(clients); lo += perWorker {
		w, err := startStormWorker(exe, stormJob{Clients: clients[lo:min(lo+perWorker, len(clients))], HelloTimeout: helloTimeout})
		if err != nil {
			f.close()
			return nil, fmt.Errorf("storm worker %d: %w", len(f.workers), err)
		}
		f.workers = append(f.workers, w)
	}
	return f, nil
}

func startStormWorker(exe string, job stormJob) (*stormWorkerProc, error) {
	cmd := exec.Command(exe, "storm-worker")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	w := &stormWorkerProc{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	if err := json.NewEncoder(stdin).Encode(job); err != nil {
		w.close()
		return nil, fmt.Errorf("send the job: %w", err)
	}
	if line, err := w.out.ReadString('\n'); err != nil || line != "ready\n" {
		w.close()
		return nil, fmt.Errorf("worker did not get ready (said %q): %v", line, err)
	}
	return w, nil
}

// storm tells every worker to connect all its clients at at, and sums their reports.
func (f *stormFleet) storm(at time.Time) (stormReport, error) {
	for i, w := range f.workers {
		if err := json.NewEncoder(w.stdin).Encode(stormStart{AtUnixNano: at.UnixNano()}); err != nil {
			return stormReport{}, fmt.Errorf("storm worker %d: send the start: %w", i, err)
		}
	}
	var sum stormReport
	for i, w := range f.workers {
		var rep stormReport
		if err := readJSONLine(w.out, &rep); err != nil {
			return sum, fmt.Errorf("storm worker %d: read its report: %w", i, err)
		}
		sum.add(rep)
	}
	return sum, nil
}

// close lets every worker close its sockets and exit, and waits for them.
func (f *stormFleet) close() error {
	var errs []error
	for _, w := range f.workers {
		errs = append(errs, w.close())
	}
	f.workers = nil
	return errors.Join(errs...)
}

func (w *stormWorkerProc) close() error {
	w.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- w.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		w.cmd.Process.Kill()
		return fmt.Errorf("storm worker %d did not exit 30 s after its stdin closed; killed: %w", w.cmd.Process.Pid, <-done)
	}
}
