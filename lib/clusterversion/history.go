package clusterversion

import (
	"math"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxHistory is how many history entries the record keeps, as the CVO.
const MaxHistory = 100

// sameRelease reports whether a history entry is desired, the CVO's rule:
// the same image (filling in a version the entry lacks), or the same
// version when the entry has no image or the same one. It fills entry in.
func sameRelease(entry *configv1.UpdateHistory, desired configv1.Release) bool {
	if desired.Image != "" && desired.Image == entry.Image {
		if desired.Version == "" {
			return true
		}
		if entry.Version == "" || entry.Version == desired.Version {
			entry.Version = desired.Version
			return true
		}
	}
	if desired.Version != "" && desired.Version == entry.Version && (entry.Image == "" || entry.Image == desired.Image) {
		entry.Image = desired.Image
		return true
	}
	return false
}

// mergeHistory records that the cluster works towards desired (completed:
// it got there), newest first, as the CVO's mergeOperatorHistory does:
//
//   - without an image nothing can be recorded (the history stays empty);
//   - the newest entry is desired: it becomes Completed (with its
//     completion time) when completed, and its accepted risks are set;
//   - else the newest entry gets a completion time (it ended, Partial or
//     not) and a new entry is pushed: Partial, or Completed at once;
//   - verified marks the newest entry verified (never unmarks it);
//   - the history is pruned to MaxHistory.
//
// desired becomes status.desired.
func mergeHistory(st *configv1.ClusterVersionStatus, desired configv1.Release, verified, completed bool, risks string, now metav1.Time) {
	if desired.Image == "" {
		if st.History == nil {
			st.History = []configv1.UpdateHistory{}
		}
		return
	}
	if len(st.History) == 0 {
		st.History = []configv1.UpdateHistory{{Version: desired.Version, Image: desired.Image, State: configv1.PartialUpdate, StartedTime: now, AcceptedRisks: risks}}
	}
	last := &st.History[0]
	if last.State == "" {
		last.State = configv1.PartialUpdate
	}
	if sameRelease(last, desired) {
		if completed {
			last.State = configv1.CompletedUpdate
			if last.CompletionTime == nil {
				t := now
				last.CompletionTime = &t
			}
		}
		last.AcceptedRisks = risks
	} else {
		if last.CompletionTime == nil {
			t := now
			last.CompletionTime = &t
		}
		entry := configv1.UpdateHistory{Version: desired.Version, Image: desired.Image, State: configv1.PartialUpdate, StartedTime: now, AcceptedRisks: risks}
		if completed {
			t := now
			entry.State, entry.CompletionTime = configv1.CompletedUpdate, &t
		}
		st.History = append([]configv1.UpdateHistory{entry}, st.History...)
	}
	if verified {
		st.History[0].Verified = true
	}
	st.History = prune(st.History, MaxHistory)
	st.Desired = desired
}

// The weights of prune, the CVO's.
const (
	finalEntries   = 5 // the newest entries are never pruned
	mostImportant  = 1000.0
	interesting    = 30.0
	partialMinor   = 20.0
	partialZStream = -20.0
	byAge          = -1.01
)

// prune drops the least informative entry while the history is longer
// than max, ranking each as the CVO does: the initial entry, the newest
// five and the newest Completed one are kept; the first or last Completed
// entry of a minor version ranks higher, Partial entries within a minor
// transition higher, Partial entries within a z-stream transition lower,
// and older entries lower.
func prune(h []configv1.UpdateHistory, max int) []configv1.UpdateHistory {
	for len(h) > max {
		// The oldest entry is the install (the CVO prunes one entry as
		// the history reaches max+1, so that is its index max).
		initial := len(h) - 1
		newestCompleted := -1
		for i := range h {
			if h[i].State == configv1.CompletedUpdate {
				newestCompleted = i
				break
			}
		}
		lowest, lowestAt := math.MaxFloat64, 0
		for i := range h {
			rank := 0.0
			switch {
			case i == initial || i < finalEntries || i == newestCompleted:
				rank = mostImportant
			case firstOrLastCompletedOfMinor(h, i, initial):
				rank = interesting
			case partialBetween(h, i, initial, func(a, b configv1.UpdateHistory) bool { return minorOf(a.Version) == minorOf(b.Version) }):
				rank = partialMinor
			case partialBetween(h, i, initial, func(a, b configv1.UpdateHistory) bool {
				return minorOf(a.Version) == minorOf(b.Version) && patchOf(a.Version) == patchOf(b.Version)
			}):
				rank = partialZStream
			}
			rank += byAge * float64(i)
			if rank < lowest {
				lowest, lowestAt = rank, i
			}
		}
		h = append(h[:lowestAt:lowestAt], h[lowestAt+1:]...)
	}
	return h
}

// olderCompleted and newerCompleted return the nearest Completed entry
// older (later in the list) or newer than i, or i itself when none.
func olderCompleted(h []configv1.UpdateHistory, i int) int {
	for j := i + 1; j < len(h); j++ {
		if h[j].State == configv1.CompletedUpdate {
			return j
		}
	}
	return i
}

func newerCompleted(h []configv1.UpdateHistory, i int) int {
	for j := i - 1; j >= 0; j-- {
		if h[j].State == configv1.CompletedUpdate {
			return j
		}
	}
	return i
}

func firstOrLastCompletedOfMinor(h []configv1.UpdateHistory, i, initial int) bool {
	if h[i].State == configv1.PartialUpdate {
		return false
	}
	if i == 0 || i == initial {
		return true
	}
	for _, j := range []int{olderCompleted(h, i), newerCompleted(h, i)} {
		if j == i || minorOf(h[i].Version) != minorOf(h[j].Version) {
			return true
		}
	}
	return false
}

// partialBetween reports a Partial entry between two Completed ones that
// same says differ.
func partialBetween(h []configv1.UpdateHistory, i, initial int, same func(a, b configv1.UpdateHistory) bool) bool {
	if h[i].State == configv1.CompletedUpdate || i == 0 || i == initial {
		return false
	}
	older, newer := olderCompleted(h, i), newerCompleted(h, i)
	if older == i || newer == i {
		return false
	}
	return !same(h[older], h[newer])
}

// CurrentVersion is the version the cluster runs: that of the newest
// Completed entry, else of the oldest entry (the install), else "" (the
// CVO's GetCurrentVersion).
func CurrentVersion(h []configv1.UpdateHistory) string {
	for _, e := range h {
		if e.State == configv1.CompletedUpdate {
			return e.Version
		}
	}
	if len(h) > 0 {
		return h[len(h)-1].Version
	}
	return ""
}
