package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// report is what a run counted. lost, duplicated, reordered and late must be 0.
type report struct {
	cfg       config
	faults    []string
	faultsEnd time.Time

	acked, retried, unacked int
	codes                   string
	expected                int // acked messages × devices of their members
	missing                 int // of those, not held by a device now
	lost                    []string
	duplicated              []string // a message_id acknowledged or held under two seq_nos
	reordered               []string // a sender's later message under a lower seq_no
	late                    []string // held, but after the bound
	worst                   time.Duration
	worstWhat               string
	copies, connects        int
	skipped                 int // seq_nos devices' complete syncs showed unused
}

// check compares what the senders had acknowledged with what each device holds.
func (r report) check(p *population, led *ledger, devices []*device) report {
	led.mu.Lock()
	acks := slices.Clone(led.acks)
	r.retried, r.unacked = led.retry, len(led.unack)
	var codes []string
	for c, n := range led.codes {
		codes = append(codes, fmt.Sprintf("%s %d", c, n))
	}
	slices.Sort(codes)
	r.codes = strings.Join(codes, ", ")
	led.mu.Unlock()
	r.acked = len(acks)
	r.missing, r.expected, r.worst, r.copies, r.connects, r.skipped = 0, 0, 0, 0, 0, 0
	r.lost, r.duplicated, r.reordered, r.late = nil, nil, nil, nil

	// One message_id, one seq_no.
	seqOf := map[string]int64{}
	for _, a := range acks {
		k := a.conv + " " + a.id
		if s, ok := seqOf[k]; ok && s != a.seq {
			r.duplicated = append(r.duplicated, fmt.Sprintf("%s acknowledged as seq %d and %d", k, s, a.seq))
		}
		seqOf[k] = a.seq
	}
	// A sender's messages into one conversation in the order it sent them.
	bySender := map[string][]acked{}
	for _, a := range acks {
		bySender[a.sender+" "+a.conv] = append(bySender[a.sender+" "+a.conv], a)
	}
	for k, as := range bySender {
		slices.SortFunc(as, func(a, b acked) int { return cmp.Compare(a.index, b.index) })
		for i := 1; i < len(as); i++ {
			if as[i].seq <= as[i-1].seq {
				r.reordered = append(r.reordered, fmt.Sprintf("%s: send %d got seq %d, after send %d's seq %d", k, as[i].index, as[i].seq, as[i-1].index, as[i-1].seq))
			}
		}
	}
	for _, d := range devices {
		d.mu.Lock()
		r.copies += d.copies
		r.connects += d.connects
		r.skipped += d.skipped
		held := map[string]int64{} // conv + message_id → seq held
		for conv, seqs := range d.got {
			for seq, m := range seqs {
				k := conv + " " + m.id
				if s, ok := held[k]; ok && s != seq {
					r.duplicated = append(r.duplicated, fmt.Sprintf("%s holds %s as seq %d and %d", d.name, k, s, seq))
				}
				held[k] = seq
			}
		}
		for _, a := range acks {
			if !slices.Contains(p.members[a.conv], d.user) {
				continue
			}
			r.expected++
			m, ok := d.got[a.conv][a.seq]
			switch {
			case !ok:
				r.missing++
				r.lost = append(r.lost, fmt.Sprintf("%s lacks %s seq %d (%s, acknowledged at %s)", d.name, a.conv, a.seq, a.id, a.at.Format("15:04:05.000")))
			case m.id != a.id:
				r.duplicated = append(r.duplicated, fmt.Sprintf("%s holds %s seq %d as %s, acknowledged as %s", d.name, a.conv, a.seq, m.id, a.id))
			default:
				delay := max(m.at.Sub(a.at), 0)
				if delay > r.worst {
					r.worst = delay
					r.worstWhat = fmt.Sprintf("%s: %s seq %d acknowledged at %s", d.name, a.conv, a.seq, a.at.Format("15:04:05.000"))
				}
				due := a.at.Add(r.cfg.bound)
				if a.at.Before(r.faultsEnd) {
					due = r.faultsEnd.Add(r.cfg.bound)
				}
				if m.at.After(due) {
					r.late = append(r.late, fmt.Sprintf("%s got %s seq %d %s after its ack", d.name, a.conv, a.seq, delay.Round(time.Millisecond)))
				}
			}
		}
		d.mu.Unlock()
	}
	return r
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "chaos: 3 nodes, %d users × %d devices, %s of sends, faults:\n", r.cfg.users, r.cfg.devices, r.cfg.duration)
	for _, f := range r.faults {
		fmt.Fprintln(w, "  "+f)
	}
	fmt.Fprintf(w, "acknowledged sends   %d (sent again after an error: %d [%s]; never acknowledged: %d)\n", r.acked, r.retried, r.codes, r.unacked)
	fmt.Fprintf(w, "deliveries expected  %d (each acknowledged message × its members' devices)\n", r.expected)
	fmt.Fprintf(w, "lost                 %d\n", len(r.lost))
	fmt.Fprintf(w, "duplicated           %d\n", len(r.duplicated))
	fmt.Fprintf(w, "reordered            %d\n", len(r.reordered))
	fmt.Fprintf(w, "late (> %s)         %d\n", r.cfg.bound, len(r.late))
	fmt.Fprintf(w, "worst delivery delay %s (%s)\n", r.worst.Round(time.Millisecond), r.worstWhat)
	fmt.Fprintf(w, "copies of a message a device held already (deduped by seq_no): %d; connections made: %d\n", r.copies, r.connects)
	fmt.Fprintf(w, "seq_nos no message took (passed after a complete sync): %d\n", r.skipped)
	for _, list := range [][]string{r.lost, r.duplicated, r.reordered, r.late} {
		for i, s := range list {
			if i == 10 {
				fmt.Fprintf(w, "  ... and %d more\n", len(list)-10)
				break
			}
			fmt.Fprintln(w, "  "+s)
		}
	}
}

func (r *report) verdict() error {
	var bad []string
	for name, list := range map[string][]string{"lost": r.lost, "duplicated": r.duplicated, "reordered": r.reordered, "late": r.late} {
		if len(list) > 0 {
			bad = append(bad, fmt.Sprintf("%d %s", len(list), name))
		}
	}
	if r.unacked > 0 {
		bad = append(bad, fmt.Sprintf("%d sends never acknowledged", r.unacked))
	}
	if r.acked == 0 {
		bad = append(bad, "nothing was acknowledged")
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return fmt.Errorf("messages went wrong: %s", strings.Join(bad, ", "))
	}
	return nil
}
