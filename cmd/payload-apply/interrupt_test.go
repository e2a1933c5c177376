package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/payload-apply/payload-apply/clustersync"
	"github.com/payload-apply/payload-apply/lib/resourceapply"
	"github.com/payload-apply/payload-apply/plan"
)

func TestProgressInterrupted(t *testing.T) {
	for _, jsonOut := range []bool{false, true} {
		var out, errOut bytes.Buffer
		p := newProgress(context.Background(), IOStreams{Out: &out, ErrOut: &errOut}, jsonOut)
		p.Event(clustersync.Planned{Tasks: 8})
		p.Event(clustersync.Interrupting{InFlight: 2, Grace: 10 * time.Second, Total: 8})
		r := &clustersync.ApplyReport{Objects: &resourceapply.ChangeSet{}, Steps: &resourceapply.ChangeSet{}, Requests: map[string]int64{"GET": 1, "PATCH": 1},
			Interrupted: &clustersync.InterruptCounts{Applied: 3, Stopped: 1, NotStarted: 4, Total: 8, Summary: "3 created"}}
		p.summary(r, time.Second)
		for _, want := range []string{
			"interrupted: starting nothing new; waiting up to 10s for 2 objects in flight (interrupt again to stop now)\n",
			"interrupted: 3 of 8 objects applied (3 created); 1 stopped in flight; 4 not started; run the same command again to finish\n",
		} {
			if !strings.Contains(errOut.String(), want) {
				t.Errorf("json %v: stderr lacks %q:\n%s", jsonOut, want, errOut.String())
			}
		}
		if jsonOut && !strings.Contains(out.String(), `"interrupted":true,"stopped":1,"notStarted":4`) {
			t.Errorf("JSON summary does not say it was interrupted:\n%s", out.String())
		}
	}
}

// TestSecondSignal: after the first interrupt (parent ended), a SIGINT
// closes the abort channel the engine cuts its grace short on.
func TestSecondSignal(t *testing.T) {
	t.Run("released before any interrupt", func(t *testing.T) {
		abort, release := secondSignal(context.Background())
		release()
		select {
		case <-abort:
			t.Error("aborted without a signal")
		default:
		}
	})
	t.Run("a second SIGINT aborts", func(t *testing.T) {
		parent, interrupt := context.WithCancel(context.Background())
		abort, listening, release := listenSecondSignal(parent)
		defer release()
		interrupt()
		<-listening
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		select {
		case <-abort:
		case <-time.After(10 * time.Second):
			t.Fatal("not aborted by a second SIGINT")
		}
	})
}

func TestInterruptedEarly(t *testing.T) {
	err := errors.New("reading the cluster's profile: boom")
	if got := interruptedEarly(context.Background(), err); got != err {
		t.Errorf("not interrupted: %v", got)
	}
	ctx, cancel := context.WithCancel(withPhaseRecorder(context.Background()))
	phaseFunc(ctx)(plan.PhaseTemplate)
	cancel()
	var ee *exitError
	if got := interruptedEarly(ctx, err); !errors.As(got, &ee) || ee.Code != exitInterrupted ||
		ee.Error() != "interrupted before anything was applied (while rendering the manifests/ templates); run the same command again" {
		t.Errorf("interrupted: %v", got)
	}
}
