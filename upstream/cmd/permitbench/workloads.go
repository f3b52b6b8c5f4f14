package main

import (
	"fmt"
	"math/rand"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/gangscheduling"
)

// result is one output line: ordered key=value pairs.
type result []string

func (r *result) add(k string, format string, v interface{}) {
	*r = append(*r, k+"="+fmt.Sprintf(format, v))
}

func settle() {
	runtime.GC()
	debug.FreeOSMemory()
}

// W1 barrier: gangs x size pods (minCount = size), one scheduling goroutine,
// one binding goroutine per pod; time until every binding goroutine is done.
func runW1(nGangs, size int) (result, error) {
	gangs, _, assumed := makeGangs(nGangs, size, int32(size))
	s, err := newScheduler(gangs, 0)
	if err != nil {
		return nil, err
	}
	settle()
	rss0 := rssBytes()

	t0 := time.Now()
	for _, p := range assumed {
		if err := s.scheduleOne(p); err != nil {
			return nil, err
		}
	}
	s.wg.Wait()
	el := time.Since(t0)

	n := int64(len(assumed))
	if s.bound.Load() != n || s.rejected.Load() != 0 || s.waiting() != 0 {
		return nil, fmt.Errorf("W1: bound=%d rejected=%d left=%d", s.bound.Load(), s.rejected.Load(), s.waiting())
	}
	var r result
	r.add("workload", "%s", "W1")
	r.add("gangs", "%d", nGangs)
	r.add("gang_size", "%d", size)
	r.add("pods", "%d", n)
	r.add("seconds", "%.6f", el.Seconds())
	r.add("pods_per_s", "%.0f", float64(n)/el.Seconds())
	r.add("rss_mb", "%.1f", mb(peakRSSBytes()))
	r.add("base_rss_mb", "%.1f", mb(rss0))
	r.add("gomaxprocs", "%d", runtime.GOMAXPROCS(0))
	return r, nil
}

// W2 hold: n gangs of minCount 2 with one member each, so all n pods wait at
// once and are released only by their permit timeout.
func runW2(n int, timeout time.Duration) (result, error) {
	gangs, _, assumed := makeGangs(n, 1, 2)
	s, err := newScheduler(gangs, timeout)
	if err != nil {
		return nil, err
	}
	s.returnedAt = make([]int64, n)
	s.index = make(map[types.UID]int, n)
	armedAt := make([]int64, n)
	for i, p := range assumed { // the harness's own tables, before the RSS baseline
		armedAt[i], s.returnedAt[i] = -1, -1
		s.index[p.UID] = i
	}
	settle()
	rss0 := rssBytes()
	var ms0, ms1, ms2 runtime.MemStats
	runtime.ReadMemStats(&ms0)

	s.base = time.Now()
	for i, p := range assumed {
		armedAt[i] = int64(time.Since(s.base))
		if err := s.scheduleOne(p); err != nil {
			return nil, err
		}
	}
	admit := time.Since(s.base)
	for s.entered.Load() < int64(n) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // let the last goroutines park on <-s
	measuredAt := time.Since(s.base)
	rss1 := rssBytes()
	// Counted before the GC, where the anchor counts after it: admission through the real
	// code takes most of the 2 s, and a GC over 100,000 goroutines outlasts the rest.
	waiting := s.waiting()
	runtime.ReadMemStats(&ms1)
	runtime.GC()
	runtime.ReadMemStats(&ms2)
	late := measuredAt > time.Duration(armedAt[0])+timeout

	s.wg.Wait()

	first, last, maxLag := int64(1<<62), int64(0), int64(0)
	for i, t := range s.returnedAt {
		if t < first {
			first = t
		}
		if t > last {
			last = t
		}
		if lag := t - armedAt[i] - int64(timeout); lag > maxLag {
			maxLag = lag
		}
	}
	left, err := s.assumedLeft(gangs)
	if err != nil {
		return nil, err
	}
	if waiting != n || s.rejected.Load() != int64(n) || s.bound.Load() != 0 || s.waiting() != 0 || left != 0 || late {
		return nil, fmt.Errorf("W2: waiting=%d rejected=%d bound=%d left=%d assumed=%d late=%v (admit %.3fs, measured at %.3fs)",
			waiting, s.rejected.Load(), s.bound.Load(), s.waiting(), left, late, admit.Seconds(), measuredAt.Seconds())
	}
	fn := float64(n)
	var r result
	r.add("workload", "%s", "W2")
	r.add("pods", "%d", n)
	r.add("timeout_s", "%g", timeout.Seconds())
	r.add("admit_s", "%.6f", admit.Seconds())
	r.add("rss_per_pod_b", "%.0f", float64(rss1-rss0)/fn)
	r.add("live_heap_per_pod_b", "%.0f", float64(int64(ms2.HeapAlloc)-int64(ms0.HeapAlloc))/fn)
	r.add("stack_per_pod_b", "%.0f", float64(int64(ms1.StackInuse)-int64(ms0.StackInuse))/fn)
	r.add("drain_s", "%.6f", time.Duration(last-first).Seconds())
	r.add("first_timeout_lag_ms", "%.3f", float64(first-armedAt[0]-int64(timeout))/1e6)
	r.add("max_lag_ms", "%.3f", float64(maxLag)/1e6)
	r.add("rss_mb", "%.1f", mb(peakRSSBytes()))
	r.add("base_rss_mb", "%.1f", mb(rss0))
	r.add("gomaxprocs", "%d", runtime.GOMAXPROCS(0))
	return r, nil
}

const (
	opGet uint8 = iota
	opIterGang
	opRejectReadd
)

type w3op struct {
	kind   uint8
	target int32
}

// W3 contention: nWaiting pods parked (no binding goroutines; gangs of
// gangSize with minCount gangSize+1, so each Permit said Wait), workers
// goroutines share totalOps operations: 80% GetWaitingPod, 10% iterate over
// one gang, 10% Reject then AddWaitingPod of a fresh waiting pod (new timer)
// under the same uid. iter: "scan" = IterateOverWaitingPods filtering on the
// pod's group; "members" = the Permit's way, the cache's pod-group state's
// AssumedPods() and GetWaitingPod for each.
func runW3(nWaiting, gangSize, totalOps, workers int, iter string) (result, error) {
	if iter != "scan" && iter != "members" {
		return nil, fmt.Errorf("W3: -iter must be scan or members")
	}
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)

	nGangs := nWaiting / gangSize
	gangs, _, pods := makeGangs(nGangs, gangSize, int32(gangSize+1))
	nWaiting = len(pods)
	s, err := newScheduler(gangs, 0)
	if err != nil {
		return nil, err
	}
	var waits map[string]time.Duration
	for _, p := range pods {
		state := framework.NewCycleState()
		if err := s.cache.AssumePod(s.logger, p); err != nil {
			return nil, err
		}
		w, st := s.fh.RunPermitPlugins(s.ctx, state, p, p.Spec.NodeName)
		if !st.IsWait() {
			return nil, fmt.Errorf("W3: Permit of %s: %v, want Wait", p.Name, st)
		}
		s.fh.AddWaitingPod(p, w)
		waits = w
	}
	if d := waits[gangscheduling.Name]; d != 5*time.Minute {
		return nil, fmt.Errorf("W3: the plugin waits %v, want 5m", d)
	}

	per := totalOps / workers
	plans := make([][]w3op, workers)
	for w := range plans {
		rng := rand.New(rand.NewSource(int64(w + 1)))
		ops := make([]w3op, per)
		for i := range ops {
			switch x := rng.Intn(10); {
			case x < 8:
				ops[i] = w3op{opGet, int32(rng.Intn(nWaiting))}
			case x == 8:
				ops[i] = w3op{opIterGang, int32(rng.Intn(nGangs))}
			default:
				ops[i] = w3op{opRejectReadd, int32(rng.Intn(nWaiting))}
			}
		}
		plans[w] = ops
	}
	scan := iter == "scan"
	fh, lister := s.fh, s.cache.PodGroupStates()
	settle()

	var sink atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(ops []w3op) {
			defer wg.Done()
			<-start
			var local int64
			for _, o := range ops {
				switch o.kind {
				case opGet:
					if wp := fh.GetWaitingPod(pods[o.target].UID); wp != nil {
						local++
					}
				case opIterGang:
					g := gangs[o.target]
					if scan {
						fh.IterateOverWaitingPods(func(wp fwk.WaitingPod) {
							if *wp.GetPod().Spec.SchedulingGroup.PodGroupName == g.name {
								local++
							}
						})
					} else {
						pgs, err := lister.Get(namespace, g.name)
						if err != nil {
							failed.Store(err)
							continue
						}
						for uid := range pgs.AssumedPods() {
							if fh.GetWaitingPod(uid) != nil {
								local++
							}
						}
					}
				case opRejectReadd:
					p := pods[o.target]
					if wp := fh.GetWaitingPod(p.UID); wp != nil {
						wp.Reject(gangscheduling.Name, "rejected by W3")
					}
					fh.AddWaitingPod(p, waits)
				}
			}
			sink.Add(local)
		}(plans[w])
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	el := time.Since(t0)

	left := s.waiting()
	fh.IterateOverWaitingPods(func(wp fwk.WaitingPod) { wp.Reject(gangscheduling.Name, "done") }) // stop timers
	if err, _ := failed.Load().(error); err != nil {
		return nil, fmt.Errorf("W3: %v", err)
	}
	if left != nWaiting || sink.Load() == 0 {
		return nil, fmt.Errorf("W3: waiting=%d want %d", left, nWaiting)
	}
	ops := per * workers
	var r result
	r.add("workload", "%s", "W3")
	r.add("iter", "%s", iter)
	r.add("waiting", "%d", nWaiting)
	r.add("gang_size", "%d", gangSize)
	r.add("ops", "%d", ops)
	r.add("workers", "%d", workers)
	r.add("seconds", "%.6f", el.Seconds())
	r.add("ns_per_op", "%.1f", float64(el.Nanoseconds())/float64(ops))
	r.add("ops_per_s", "%.0f", float64(ops)/el.Seconds())
	r.add("rss_mb", "%.1f", mb(peakRSSBytes()))
	r.add("gomaxprocs", "%d", runtime.GOMAXPROCS(0))
	return r, nil
}

// W4 fan-out: one gang of size members; size-1 wait; the last member's
// Permit Allows them all. Time from that scheduling cycle until every binding
// goroutine is done.
func runW4(size int) (result, error) {
	gangs, _, assumed := makeGangs(1, size, int32(size))
	s, err := newScheduler(gangs, 0)
	if err != nil {
		return nil, err
	}
	for _, p := range assumed[:size-1] {
		if err := s.scheduleOne(p); err != nil {
			return nil, err
		}
	}
	for s.entered.Load() < int64(size-1) {
		time.Sleep(time.Millisecond)
	}
	settle()
	time.Sleep(50 * time.Millisecond)
	if w := s.waiting(); w != size-1 {
		return nil, fmt.Errorf("W4: waiting=%d want %d", w, size-1)
	}

	t0 := time.Now()
	if err := s.scheduleOne(assumed[size-1]); err != nil {
		return nil, err
	}
	permit := time.Since(t0)
	s.wg.Wait()
	el := time.Since(t0)

	if s.bound.Load() != int64(size) || s.waiting() != 0 {
		return nil, fmt.Errorf("W4: bound=%d left=%d", s.bound.Load(), s.waiting())
	}
	var r result
	r.add("workload", "%s", "W4")
	r.add("gang_size", "%d", size)
	r.add("seconds", "%.6f", el.Seconds())
	r.add("permit_call_s", "%.6f", permit.Seconds())
	r.add("pods_per_s", "%.0f", float64(size)/el.Seconds())
	r.add("rss_mb", "%.1f", mb(peakRSSBytes()))
	r.add("gomaxprocs", "%d", runtime.GOMAXPROCS(0))
	return r, nil
}
