// Command permitbench runs the Go anchor's Permit-barrier workloads W1–W4
// (anchors/go-permit, whose README defines them) through kube-scheduler's own
// code, v1.36.3: the framework runtime built by frameworkruntime.NewFramework
// with the real waiting-pods map (NewWaitingPodsMap, WithWaitingPods), the
// real RunPermitPlugins, AddWaitingPod, WaitOnPermit, GetWaitingPod and
// IterateOverWaitingPods, the waiting pods' real Allow/Reject and timers, and
// the real GangScheduling plugin, whose Permit reads the PodGroup from an
// informer lister and the pod-group state from the scheduler cache
// (backend/cache, the PodGroupManager). Real time: it is a benchmark.
//
// Each workload prints one line with the anchor's keys, so .ci/compare-go
// reads both the same way, and exits 1 if its outcome check fails.
//
// What one pod's scheduling cycle is here (schedule_one.go, placement left
// out as in the anchor): cache.AssumePod of a copy with its node set — the
// only way into the pod-group state's assumed set, so the cache's per-node
// accounting (NodeInfo.AddPod) is paid too; RunReservePluginsReserve (no
// Reserve plugin is configured); RunPermitPlugins; AddWaitingPod on Wait; then
// a binding goroutine: WaitOnPermit, then on success a no-op bind, on failure
// RunReservePluginsUnreserve and cache.ForgetPod, as handleBindingCycleError
// does. Setup, not timed, is what the informers would have done before:
// every PodGroup in the lister's store, every pod in its pod-group state
// (cache.AddPodGroupMember), and the assumed copies built (the scheduling
// cycle's DeepCopy, prebuilt as the anchor prebuilds its pods). Pods spread
// over 1,000 nodes (the cache keeps a per-node pod list that ForgetPod
// searches).
//
// Where the real code cannot run a workload as the anchor defines it:
//
//   - W2's permit timeout: GangScheduling's Permit always waits 5 min
//     (permitTimeoutDuration, a constant). W2 registers, under the plugin's
//     name, a wrapper whose Permit calls the real one and, when it says Wait,
//     returns W2's timeout instead. Everything else is the real plugin. That
//     timeout is 6 s (-w2-timeout), not the anchor's 2 s: admitting 100,000
//     pods through the real scheduling cycle takes 2–3.5 s on the 2 shared
//     cores this was written on, so with 2 s the first pods time out before
//     the last are admitted and "every pod waiting at once", the state W2
//     measures, never exists. The memory figures do not depend on it; drain
//     and the lags are measured from each pod's own deadline, as the anchor's.
//     W2 also counts the waiting pods before its GC, not after as the anchor
//     does (the GC over 100,000 goroutines can outlast the slack).
//   - The scheduling queue is not run; the plugin's Activate of unscheduled
//     siblings goes to a no-op PodActivator (the map it is given is still
//     built by the real code, on every Wait).
//   - kube-scheduler's metrics are registered, as the scheduler binary does
//     (the cache's metrics goroutine needs them); no one scrapes them. klog
//     runs at its default verbosity.
//   - The informer's update after a bind (cache.AddPod moving the pod to
//     assigned) is not run, as the anchor's bind is a no-op.
//   - W3's "iterate over one gang" with -iter=members is what the real Permit
//     does: the cache's pod-group state, AssumedPods() (a copy of the set),
//     then GetWaitingPod per uid. With -iter=scan it is IterateOverWaitingPods
//     filtering on the pod's scheduling group.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

func main() {
	w := flag.String("w", "W1", "workload: W1, W2, W3, W4 or all (all = one process, RSS figures not independent)")
	iter := flag.String("iter", "scan", "W3 iterate-over-one-gang: scan (IterateOverWaitingPods + filter) or members (the Permit's way: AssumedPods, then GetWaitingPod per uid)")
	w2Timeout := flag.Duration("w2-timeout", 6*time.Second, "W2's permit timeout (the anchor's is 2s, shorter than admitting 100,000 pods through the real code takes here)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()

	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{
		"GenericWorkload": true,
		"GangScheduling":  true,
	}); err != nil {
		fail(err)
	}
	metrics.Register() // as the scheduler binary does; the cache's metrics loop needs it
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}

	var names []string
	if strings.EqualFold(*w, "all") {
		names = []string{"W1", "W2", "W3", "W4"}
	} else {
		names = []string{strings.ToUpper(*w)}
	}
	for _, name := range names {
		var r result
		var err error
		switch name {
		case "W1":
			r, err = runW1(10000, 8)
		case "W2":
			r, err = runW2(100000, *w2Timeout)
		case "W3":
			r, err = runW3(10000, 8, 1000000, 2, *iter)
		case "W4":
			r, err = runW4(10000)
		default:
			err = fmt.Errorf("unknown workload %q", name)
		}
		if err != nil {
			pprof.StopCPUProfile()
			fail(err)
		}
		r.add("go", "%s", runtime.Version())
		fmt.Println(strings.Join(r, " "))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "error:", err)
	os.Exit(1)
}
