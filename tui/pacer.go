package tui

import (
	"errors"
	"reflect"
	"sync"
	"time"
	"unsafe"

	tea "charm.land/bubbletea/v2"
)

// Bubble Tea v2's renderer runs a ticker for as long as the program runs
// (Program.startRenderer) and looks for a new frame on every tick: at 30
// frames a second that was nearly all of an idle TUI's CPU (about 1% of a
// core, docs/tui.md "Performance"), although every change to the screen
// comes through an Update, after which Bubble Tea calls View. So View is
// the one signal needed: a FramePacer keeps the ticker at the frame rate
// while Views come and slows it to a crawl once none has come for a while.
// Bubble Tea has no option for this; the pacer reaches the ticker through
// the unexported field, checked when attached (TestPacerFindsTheTicker
// fails on a Bubble Tea whose Program no longer has it), and does nothing
// when it is not there.

// Pacer defaults. idleAfter is many frames, so the renderer has drawn the
// last frame before the ticker slows even on a loaded machine; sleepFrame
// is a safety net, not a frame rate: should a change ever reach the screen
// without a View, it shows within that.
//
// While a stream of changes comes (a busy group at 200 msgs/s: a View every
// 30 ms or so, as the session holds incoming messages), every tick finds a
// new frame, and drawing one (Bubble Tea's renderer parses the whole frame
// into cells and diffs it, 0.8–1.1 ms at 120×40 on a loaded 2-core machine:
// BenchmarkStreamFrameRenderer) was a quarter of the TUI's CPU. Once
// streamViews Views came in an idleAfter window, the ticker runs at
// streamFrame until a window has fewer than streamKeep (pacer_keep.go): 10
// frames a second, each showing what came since the last, and a pause in
// the stream drawn at once (pacer_quiet.go), so its last message is as soon
// on screen as at the full rate. A View after a quiet spell still gets the
// next frame at the full rate.
//
// Keys never slow frames: held down or arriving as a paste without bracketed
// paste, they bring as many Views as a stream, and at streamFrame the last
// of 2,000 typed characters reached the screen 189–377 ms after it was sent
// against 131–161 at the full rate (scripts/tui-start.sh). A window in which
// a key came is not a stream, and a key during one sets the full rate at once.
const (
	pacerIdleAfter   = 250 * time.Millisecond
	pacerSleepFrame  = 2 * time.Second
	pacerStreamFrame = 100 * time.Millisecond
	pacerStreamViews = 8 // in idleAfter: 32 a second
)

// FramePacer slows Bubble Tea's renderer ticker while nothing changes. Make
// one with NewFramePacer, give it to New (Options.Pacer) and Attach it to
// the program before Run.
type FramePacer struct {
	frame, sleep, idleAfter time.Duration
	streamFrame             time.Duration // the ticker's period during a stream
	streamViews             int           // Views in idleAfter that make a stream
	streamKeep              int           // Views in idleAfter that keep one going (pacer_keep.go)
	streamQuiet             time.Duration // no View for this long: the stream paused

	mu        sync.Mutex
	field     **time.Ticker // the program's ticker field; nil: not attached
	ticker    *time.Ticker  // read from field at the first View (set by Run)
	asleep    bool          // ticker at sleep, not frame
	streaming bool          // ticker at streamFrame
	views     int           // Views since the idle check was armed
	keys      int           // keys since the idle check was armed
	check     *time.Timer   // the idle check; armed while awake
	armed     bool
	period    time.Duration // what the ticker was last set to (tests)
	sleeps    int           // times the ticker was slowed (tests)
	streams   int           // times a stream slowed it to streamFrame (tests)
	quiet     *time.Timer   // fires streamQuiet after a stream's last View
	settle    *time.Timer   // ends the ticker's short period after a pause's frame
	pauses    int           // frames drawn at once at a pause in a stream (tests)

	// What pacer_withhold.go keeps: Views not drawn during a stream.
	prog      *tea.Program // where a frame is asked for (frameDueMsg)
	stale     bool         // a View was withheld since the last one drawn
	due       bool         // a frame is asked for: the next View is drawn
	dueNow    bool         // and put on the screen at once
	tickedAt  time.Time    // when the ticker was last reset: its phase
	frameNext *time.Timer  // asks for the stream's next frame
	frameSet  bool         // frameNext is armed
	withheld  int          // Views withheld (tests)
	drawn     int          // Views drawn (tests)
	stopped   bool         // the program has ended (pacer_stop.go)
	resets    int          // times the ticker was reset (tests)
	soons     int          // frames drawn at once, off the ticker's period (tests)
	// onSleep runs each time the ticker is slowed (pacer_sleep.go).
	onSleep func()
}

// NewFramePacer returns a pacer for a program running at fps frames a
// second (as given to tea.WithFPS).
func NewFramePacer(fps int) *FramePacer {
	frame := time.Second / time.Duration(max(fps, 1))
	return &FramePacer{frame: frame, sleep: pacerSleepFrame, idleAfter: pacerIdleAfter,
		streamFrame: max(frame, pacerStreamFrame), streamViews: pacerStreamViews, streamKeep: pacerStreamKeepViews, streamQuiet: pacerStreamQuiet}
}

// errNoTicker is Attach's answer for a Bubble Tea whose Program has no
// ticker field of the expected type.
var errNoTicker = errors.New("bubbletea's Program has no ticker field: the renderer ticks at its frame rate while idle")

// Attach finds p's renderer ticker. On an error the pacer does nothing and
// the renderer ticks as Bubble Tea has it.
func (f *FramePacer) Attach(p *tea.Program) error {
	v := reflect.ValueOf(p).Elem().FieldByName("ticker")
	if !v.IsValid() || v.Type() != reflect.TypeFor[*time.Ticker]() {
		return errNoTicker
	}
	f.mu.Lock()
	f.field = (**time.Ticker)(unsafe.Pointer(v.UnsafeAddr()))
	f.prog = p
	f.mu.Unlock()
	return nil
}

// viewed is called from every View that is drawn (one withheld during a
// stream calls withhold instead, pacer_withhold.go), on Bubble Tea's event
// loop (which is where Run set the ticker, before the first View): a new
// frame may be waiting, so the ticker runs at the frame rate until Views
// stop.
func (f *FramePacer) viewed() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ticker == nil {
		if f.field == nil || *f.field == nil {
			return
		}
		f.ticker = *f.field
	}
	if f.stopped {
		return
	}
	asked := f.drawnView()
	if asked {
		// The frame the pacer asked for: not a change of its own, so it
		// neither counts towards a stream nor delays the pause's frame.
		return
	}
	f.views++
	if f.asleep {
		f.asleep = false
		f.reset(f.frame)
	}
	if f.streaming {
		f.streamViewed()
	}
	switch {
	case f.check == nil:
		f.check, f.armed = time.AfterFunc(f.idleAfter, f.idleCheck), true
	case !f.armed:
		f.check.Reset(f.idleAfter)
		f.armed = true
	}
}

// idleCheck slows the ticker when no View came since it was armed, and
// waits another idleAfter otherwise, with the ticker at streamFrame when
// enough Views came to make a stream and at frame when fewer did.
func (f *FramePacer) idleCheck() {
	f.mu.Lock()
	ask := f.idleCheckLocked()
	f.mu.Unlock()
	ask()
}

// idleCheckLocked is idleCheck with f.mu held; what it returns asks for a
// frame (once the lock is let go) when a stream ends with a View withheld.
func (f *FramePacer) idleCheckLocked() (ask func()) {
	if f.stopped {
		return noFrame
	}
	views, keys := f.views, f.keys
	f.views, f.keys = 0, 0
	if views == 0 {
		f.armed, f.asleep, f.streaming = false, true, false
		f.sleeps++
		f.reset(f.sleep)
		if f.onSleep != nil {
			go f.onSleep()
		}
		return f.askFrame(true)
	}
	if stream := f.streamGoesOn(views, keys); stream != f.streaming {
		f.streaming = stream
		if stream {
			f.streams++
			f.reset(f.streamFrame)
			f.streamViewed() // the stream may have ended with the window
		} else {
			f.reset(f.frame)
			ask = f.askFrame(true)
		}
	}
	f.check.Reset(f.idleAfter)
	if ask == nil {
		ask = noFrame
	}
	return ask
}

// keyed is called from Update for every key (or paste, or wheel turn) the
// user gives, before its View: the window it falls in is typing, not a
// stream, so frames go at the full rate.
func (f *FramePacer) keyed() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys++
	if f.streaming {
		f.streaming = false
		f.reset(f.frame)
	}
}

func (f *FramePacer) reset(period time.Duration) {
	if f.stopped {
		return
	}
	f.period = period
	f.tick(period)
}

// tick resets the ticker, with f.mu held; never once the program has ended
// (pacer_stop.go): Bubble Tea has stopped its ticker, and a Reset would
// start it again.
func (f *FramePacer) tick(period time.Duration) {
	if f.stopped {
		return
	}
	f.resets++
	f.tickedAt = time.Now()
	f.ticker.Reset(period)
}
