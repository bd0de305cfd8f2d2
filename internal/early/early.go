// Package early starts the chat TUI's start-up work on a goroutine of its
// own, from package initialisers, when the process is the TUI.
//
// internal/widthwarm (go-runewidth's width table) and internal/heapwarm
// (the heap's next pages) each start such work from their initialiser,
// so that it runs on the other core while the rest of the initialisers and
// main go on. That only helps if they are initialised early, and the Go
// specification initialises a package once its imports are, in the order
// of their paths: this package imports only the standard library (sync),
// so that importing it moves neither of them later.
package early

import "sync"

// ForTUI is whether a process started with args (os.Args) is the TUI: chat
// alone, no command and no flag. The commands (chat send, chat tail, ...)
// would do the work for nothing, and `chat --home DIR` (flags, no command)
// starts it from runTUI.
func ForTUI(args []string) bool { return len(args) == 1 }

// Job is work started at most once, on a goroutine of its own.
type Job struct {
	work func()
	once sync.Once
	done chan struct{}
}

// NewJob returns a job that does work once started.
func NewJob(work func()) *Job {
	return &Job{work: work, done: make(chan struct{})}
}

// Start starts the work on a goroutine of its own, the first time it is
// called; later calls do nothing.
func (j *Job) Start() {
	j.once.Do(func() {
		go func() {
			j.work()
			close(j.done)
		}()
	})
}

// Done is closed once the work has returned.
func (j *Job) Done() <-chan struct{} { return j.done }
