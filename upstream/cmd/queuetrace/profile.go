package main

// The plugin profiles a trace can choose (its "config" op): the queueing hints and PreEnqueue
// plugins the queue runs, the same on gangway's side (cli/src/differential/profile.rs).

import (
	"context"
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// The default profile's plugin: NodeResourcesFit queues a pod it rejected on a freed pod or a
// new or changed node, as gangway's scheduler registers it.
const nodeResourcesFit = "NodeResourcesFit"

// The conformance profile's plugins (tests/src/queue_conformance/fixtures.rs): Fit queues on
// NodeAdd only for the node "big" (an error for "broken"), on AssignedPodDelete and on
// unscheduled pod updates; Skip answers QueueSkip; Pending is a plugin a pod waits on; Bar
// registered no hint; Gate is a PreEnqueue plugin.
const (
	fit     = "Fit"
	skip    = "Skip"
	pending = "Pending"
	gate    = "Gate"
)

// The cluster events a trace names.
var events = map[string]fwk.ClusterEvent{
	"NodeAdd":              {Resource: fwk.Node, ActionType: fwk.Add},
	"NodeUpdate":           {Resource: fwk.Node, ActionType: fwk.Update},
	"AssignedPodDelete":    framework.EventAssignedPodDelete,
	"AssignedPodAdd":       framework.EventAssignedPodAdd,
	"UnscheduledPodAdd":    framework.EventUnscheduledPodAdd,
	"UnscheduledPodUpdate": framework.EventUnscheduledPodUpdate,
	"PodGroupAdd":          {Resource: fwk.PodGroup, ActionType: fwk.Add},
	"PodGroupUpdate":       {Resource: fwk.PodGroup, ActionType: fwk.Update},
	"UnschedulableTimeout": framework.EventUnschedulableTimeout,
	"ForceActivate":        framework.EventForceActivate,
	// 1.36 names it (framework.BackoffComplete) but builds no event of it: a wildcard, as
	// gangway's ClusterEvent::BackoffComplete is.
	"BackoffComplete": {Resource: fwk.WildCard, ActionType: fwk.All, CustomLabel: framework.BackoffComplete},
}

// eventObjects are the event's old and new objects, as its informer would hand them over: a
// node named `node` (default "node"); a pod named `pod` (default "assigned"; an unscheduled
// pod's update raises its priority from 0 to `priority`; a delete has only the old object).
// PodGroup events carry none (no profile's hint reads them).
func eventObjects(name, node, pod string, priority int32) (oldObj, newObj interface{}) {
	if node == "" {
		node = "node"
	}
	if pod == "" {
		pod = "assigned"
	}
	podObject := func(priority int32, nodeName string) *v1.Pod {
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: "ns", UID: types.UID(pod)},
			Spec:       v1.PodSpec{NodeName: nodeName, Priority: &priority},
		}
	}
	switch name {
	case "NodeAdd", "NodeUpdate":
		return nil, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}
	case "AssignedPodDelete":
		return podObject(0, node), nil
	case "AssignedPodAdd":
		return nil, podObject(0, node)
	case "UnscheduledPodAdd":
		return nil, podObject(0, "")
	case "UnscheduledPodUpdate":
		return podObject(0, ""), podObject(priority, "")
	}
	return nil, nil
}

type hintFn = fwk.QueueingHintFn

func answer(hint fwk.QueueingHint) hintFn {
	return func(klog.Logger, *v1.Pod, interface{}, interface{}) (fwk.QueueingHint, error) {
		return hint, nil
	}
}

// fitOnNodeAdd: Queue for the node "big", an error for "broken", QueueSkip otherwise.
func fitOnNodeAdd(_ klog.Logger, _ *v1.Pod, _, newObj interface{}) (fwk.QueueingHint, error) {
	node, ok := newObj.(*v1.Node)
	switch {
	case !ok:
		return fwk.Queue, fmt.Errorf("not a node: %T", newObj)
	case node.Name == "big":
		return fwk.Queue, nil
	case node.Name == "broken":
		return fwk.Queue, errors.New("hint failed")
	}
	return fwk.QueueSkip, nil
}

// gatePlugin holds pods named gated-* with priority ≤ 0 while its switch is closed.
type gatePlugin struct{ open *bool }

func (g *gatePlugin) Name() string { return gate }

func (g *gatePlugin) PreEnqueue(_ context.Context, p *v1.Pod) *fwk.Status {
	if strings.HasPrefix(p.Name, "gated-") && !*g.open && p.Spec.Priority != nil && *p.Spec.Priority <= 0 {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "gated")
	}
	return nil
}

// profile is a plugin profile's queue options; open is the Gate's switch.
func profile(name string, open *bool) ([]queue.Option, error) {
	m := queue.QueueingHintMap{}
	register := func(event string, plugin string, fn hintFn) {
		m[events[event]] = append(m[events[event]], &queue.QueueingHintFunction{PluginName: plugin, QueueingHintFn: fn})
	}
	switch name {
	case "", "default":
		for _, event := range []string{"NodeAdd", "NodeUpdate", "AssignedPodDelete"} {
			register(event, nodeResourcesFit, answer(fwk.Queue))
		}
		return []queue.Option{queue.WithQueueingHintMapPerProfile(queue.QueueingHintMapPerProfile{"": m})}, nil
	case "conformance":
		podUpdate := framework.EventUnscheduledPodUpdate
		register("NodeAdd", fit, fitOnNodeAdd)
		register("AssignedPodDelete", fit, answer(fwk.Queue))
		m[podUpdate] = append(m[podUpdate], &queue.QueueingHintFunction{PluginName: fit, QueueingHintFn: answer(fwk.Queue)})
		register("AssignedPodDelete", skip, answer(fwk.QueueSkip))
		m[podUpdate] = append(m[podUpdate], &queue.QueueingHintFunction{PluginName: skip, QueueingHintFn: answer(fwk.QueueSkip)})
		register("NodeAdd", pending, answer(fwk.Queue))
		register("AssignedPodDelete", pending, answer(fwk.Queue))
		m[podUpdate] = append(m[podUpdate], &queue.QueueingHintFunction{PluginName: gate, QueueingHintFn: answer(fwk.Queue)})
		register("PodGroupAdd", gate, answer(fwk.Queue))
		pre := map[string]map[string]fwk.PreEnqueuePlugin{"": {gate: &gatePlugin{open: open}}}
		return []queue.Option{
			queue.WithQueueingHintMapPerProfile(queue.QueueingHintMapPerProfile{"": m}),
			queue.WithPreEnqueuePluginMap(pre),
		}, nil
	case "lockstep":
		return lockstepProfile(), nil
	}
	return nil, fmt.Errorf("unknown profile %q", name)
}

// precheck is move_all's PreEnqueueCheck, leaving out the pod named exclude (if any): nil for
// none; "never" records that it was called.
func precheck(kind string, min int32, exclude string, called *string) (queue.PreEnqueueCheck, error) {
	check, err := priorityCheck(kind, min, called)
	if err != nil || exclude == "" {
		return check, err
	}
	return func(p *v1.Pod) bool { return p.Name != exclude && (check == nil || check(p)) }, nil
}

// priorityCheck is the precheck over the pod's priority that kind names.
func priorityCheck(kind string, min int32, called *string) (queue.PreEnqueueCheck, error) {
	priority := func(p *v1.Pod) int32 {
		if p.Spec.Priority == nil {
			return 0
		}
		return *p.Spec.Priority
	}
	switch kind {
	case "", "all":
		return nil, nil
	case "min_priority":
		return func(p *v1.Pod) bool { return priority(p) >= min }, nil
	case "even_at_least":
		return func(p *v1.Pod) bool { return priority(p)%2 == 0 && priority(p) >= min }, nil
	case "even_negative":
		return func(p *v1.Pod) bool { return priority(p)%2 == 0 && priority(p) < 0 }, nil
	case "never":
		return func(p *v1.Pod) bool {
			if *called == "" {
				*called = "precheck called for " + p.Name
			}
			return false
		}, nil
	}
	return nil, fmt.Errorf("unknown precheck %q", kind)
}
