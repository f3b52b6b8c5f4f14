// Command queuetrace drives kube-scheduler's own scheduling queue
// (k8s.io/kubernetes/pkg/scheduler/backend/queue, v1.36, default feature gates) through a trace
// and prints an observation after every step — the Go side of gangway's differential
// (upstream/README.md). Time is a fake clock that only the trace moves; the queue's periodic
// flushes run only when the trace says so.
//
// A trace is JSON lines on stdin, one operation each:
//
//	{"op":"add","pod":"a","priority":0}
//	{"op":"update","pod":"a","priority":5}
//	{"op":"pop"}
//	{"op":"unschedulable","pod":"a","plugins":["NodeResourcesFit"]}
//	{"op":"error","pod":"a"}
//	{"op":"done","pod":"a"}
//	{"op":"move_all","event":"NodeAdd"}
//	{"op":"activate","pods":["a"]}
//	{"op":"delete","pod":"a"}
//	{"op":"advance_ms","ms":1000}
//	{"op":"flush_backoff"}
//	{"op":"flush_leftover"}
//	{"op":"close"}
//
// Each observation is one JSON line: the step, the operation, the pod a pop returned, and the
// place of every pod the trace named ("active", "backoff", "error_backoff", "unschedulable",
// "in_flight", or "absent").
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"time"
	_ "unsafe" // for go:linkname

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	testingclock "k8s.io/utils/clock/testing"
)

// The queue's periodic flushes are unexported; Run would drive them on real time. The
// harness calls them when the trace says (build with -ldflags=-checklinkname=0).
//
//go:linkname flushBackoffQCompleted k8s.io/kubernetes/pkg/scheduler/backend/queue.(*PriorityQueue).flushBackoffQCompleted
func flushBackoffQCompleted(p *queue.PriorityQueue, logger klog.Logger)

//go:linkname flushUnschedulablePodsLeftover k8s.io/kubernetes/pkg/scheduler/backend/queue.(*PriorityQueue).flushUnschedulablePodsLeftover
func flushUnschedulablePodsLeftover(p *queue.PriorityQueue, logger klog.Logger)

// Op is one line of a trace.
type Op struct {
	Op       string   `json:"op"`
	Pod      string   `json:"pod,omitempty"`
	Pods     []string `json:"pods,omitempty"`
	Priority int32    `json:"priority,omitempty"`
	Plugins  []string `json:"plugins,omitempty"`
	Event    string   `json:"event,omitempty"`
	Ms       int64    `json:"ms,omitempty"`
}

// Observation is what the harness prints after each step.
type Observation struct {
	Step   int               `json:"step"`
	Op     string            `json:"op"`
	Popped *string           `json:"popped,omitempty"`
	Places map[string]string `json:"places"`
	Error  string            `json:"error,omitempty"`
}

// The plugins whose queueing hints the queue runs: NodeResourcesFit queues a pod it rejected
// on a freed pod or a new or changed node, as gangway's scheduler registers it.
const nodeResourcesFit = "NodeResourcesFit"

var events = map[string]fwk.ClusterEvent{
	"NodeAdd":           {Resource: fwk.Node, ActionType: fwk.Add},
	"NodeUpdate":        {Resource: fwk.Node, ActionType: fwk.Update},
	"AssignedPodDelete": framework.EventAssignedPodDelete,
	"AssignedPodAdd":    framework.EventAssignedPodAdd,
}

func hints() queue.QueueingHintMapPerProfile {
	queueIt := func(klog.Logger, *v1.Pod, interface{}, interface{}) (fwk.QueueingHint, error) {
		return fwk.Queue, nil
	}
	m := queue.QueueingHintMap{}
	for _, name := range []string{"NodeAdd", "NodeUpdate", "AssignedPodDelete"} {
		m[events[name]] = []*queue.QueueingHintFunction{{PluginName: nodeResourcesFit, QueueingHintFn: queueIt}}
	}
	return queue.QueueingHintMapPerProfile{"": m}
}

type harness struct {
	logger  klog.Logger
	clock   *testingclock.FakeClock
	q       *queue.PriorityQueue
	pods    map[string]*v1.Pod
	names   []string
	popped  map[string]*framework.QueuedPodInfo
	cycles  map[string]int64
	created time.Time
}

func newHarness() *harness {
	// The queue records metrics on every move; they must exist (as kube-scheduler registers
	// them at start).
	metrics.Register()
	start := time.Unix(0, 0).UTC()
	clock := testingclock.NewFakeClock(start)
	less := (&queuesort.PrioritySort{}).Less
	q := queue.NewTestQueue(context.Background(), less,
		queue.WithClock(clock),
		queue.WithQueueingHintMapPerProfile(hints()),
	)
	return &harness{
		logger: klog.Background(), clock: clock, q: q,
		pods: map[string]*v1.Pod{}, popped: map[string]*framework.QueuedPodInfo{},
		cycles: map[string]int64{}, created: start,
	}
}

func (h *harness) pod(name string, priority int32) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "ns", UID: types.UID(name),
			CreationTimestamp: metav1.NewTime(h.created),
		},
		Spec: v1.PodSpec{Priority: &priority},
	}
	if _, seen := h.pods[name]; !seen {
		h.names = append(h.names, name)
	}
	h.pods[name] = p
	return p
}

func (h *harness) apply(op Op) (*string, error) {
	ctx := context.Background()
	switch op.Op {
	case "add":
		h.q.Add(ctx, h.pod(op.Pod, op.Priority))
	case "update":
		old, ok := h.pods[op.Pod]
		if !ok {
			return nil, fmt.Errorf("pod %s is unknown", op.Pod)
		}
		h.q.Update(ctx, old, h.pod(op.Pod, op.Priority))
	case "pop":
		// Pop blocks on an empty active queue unless a pod backs off for a rejection (1.36
		// pops those early); a pod in the error backoff is never popped early.
		places := h.places()
		poppable := false
		for _, place := range places {
			poppable = poppable || place == "active" || place == "backoff"
		}
		if !poppable {
			return nil, nil
		}
		cycle := h.q.SchedulingCycle()
		pInfo, err := h.q.Pop(h.logger)
		if err != nil || pInfo == nil {
			return nil, err
		}
		name := pInfo.Pod.Name
		h.popped[name] = pInfo
		h.cycles[name] = cycle
		return &name, nil
	case "unschedulable", "error":
		pInfo, ok := h.popped[op.Pod]
		if !ok {
			return nil, fmt.Errorf("pod %s is not in flight", op.Pod)
		}
		delete(h.popped, op.Pod)
		// As the scheduler's failure handler does (handleSchedulingFailure in schedule_one.go):
		// a pod gone from the informer's cache is not requeued, only done; otherwise it goes
		// back as the cache has it now, its latest object.
		latest, exists := h.pods[op.Pod]
		if !exists {
			h.q.Done(pInfo.Pod.UID)
			return nil, nil
		}
		podInfo, err := framework.NewPodInfo(latest.DeepCopy())
		if err != nil {
			return nil, err
		}
		pInfo.PodInfo = podInfo
		pInfo.UnschedulablePlugins = sets.New(op.Plugins...)
		return nil, h.q.AddUnschedulableIfNotPresent(h.logger, pInfo, h.cycles[op.Pod])
	case "done":
		delete(h.popped, op.Pod)
		h.q.Done(types.UID(op.Pod))
	case "move_all":
		event, ok := events[op.Event]
		if !ok {
			return nil, fmt.Errorf("unknown event %q", op.Event)
		}
		h.q.MoveAllToActiveOrBackoffQueue(h.logger, event, nil, nil, nil)
	case "activate":
		pods := map[string]*v1.Pod{}
		for _, name := range op.Pods {
			if p, ok := h.pods[name]; ok {
				pods[name] = p
			}
		}
		h.q.Activate(h.logger, pods)
	case "delete":
		if p, ok := h.pods[op.Pod]; ok {
			h.q.Delete(p)
			delete(h.pods, op.Pod) // gone from the informer's cache too
		}
	case "advance_ms":
		h.clock.Step(time.Duration(op.Ms) * time.Millisecond)
	case "flush_backoff":
		flushBackoffQCompleted(h.q, h.logger)
	case "flush_leftover":
		flushUnschedulablePodsLeftover(h.q, h.logger)
	case "close":
		h.q.Close()
	default:
		return nil, fmt.Errorf("unknown op %q", op.Op)
	}
	return nil, nil
}

func (h *harness) places() map[string]string {
	places := map[string]string{}
	for _, name := range h.names {
		places[name] = "absent"
	}
	mark := func(pods []*v1.Pod, place string) {
		for _, p := range pods {
			places[p.Name] = place
		}
	}
	mark(h.q.PodsInActiveQ(), "active")
	// PodsInBackoffQ lists both backoff heaps; a pod rejected by no plugin is in the error
	// heap (the rule backoffQueue.add routes by).
	for _, p := range h.q.PodsInBackoffQ() {
		places[p.Name] = "backoff"
		if pInfo, ok := h.q.GetPod(p.Name, p.Namespace); ok &&
			pInfo.UnschedulablePlugins.Len() == 0 && pInfo.PendingPlugins.Len() == 0 {
			places[p.Name] = "error_backoff"
		}
	}
	mark(h.q.UnschedulablePods(), "unschedulable")
	mark(h.q.InFlightPods(), "in_flight")
	return places
}

func main() {
	h := newHarness()
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	step := 0
	for in.Scan() {
		line := in.Bytes()
		if len(line) == 0 {
			continue
		}
		var op Op
		if err := json.Unmarshal(line, &op); err != nil {
			fmt.Fprintf(os.Stderr, "queuetrace: line %d: %v\n", step+1, err)
			os.Exit(2)
		}
		step++
		popped, err := h.apply(op)
		obs := Observation{Step: step, Op: op.Op, Popped: popped, Places: h.places()}
		if err != nil {
			obs.Error = err.Error()
		}
		_ = out.Encode(obs)
	}

}
