package main

// The "lockstep" profile: the plugin set of gangway's queue lockstep driver, the one its
// queue_moves fuzz target and prop_queue run (model/src/queue/plugin_set.rs), so that the fuzz
// corpus replays here as traces (gangway differential --corpus). Gate holds pods named gated*
// whose priority is not above 0 and queues them on an update raising the priority; Fit
// (NodeResourcesFit) queues on a freed pod (not "small"; an error for "broken") and on the node
// "big" added or updated (an error for "broken" added); Claims (DynamicResources) queues on the
// node "ready" updated (an error for "broken") and on a PodGroup added; Silent registered no
// hint.

import (
	"context"
	"errors"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

const (
	lockstepGate   = "Gate"
	lockstepClaims = "DynamicResources"
)

// lockstepGatePlugin holds pods named gated* whose priority is 0 or less.
type lockstepGatePlugin struct{}

func (lockstepGatePlugin) Name() string { return lockstepGate }

func (lockstepGatePlugin) PreEnqueue(_ context.Context, p *v1.Pod) *fwk.Status {
	if strings.HasPrefix(p.Name, "gated") && p.Spec.Priority != nil && *p.Spec.Priority <= 0 {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "gated")
	}
	return nil
}

// byName answers from the name of the event's object (the old one for a delete): answers[name],
// else otherwise; a name in broken gets an error.
func byName(answers map[string]fwk.QueueingHint, broken string, otherwise fwk.QueueingHint) hintFn {
	return func(_ klog.Logger, _ *v1.Pod, oldObj, newObj interface{}) (fwk.QueueingHint, error) {
		obj := newObj
		if obj == nil {
			obj = oldObj
		}
		var name string
		switch o := obj.(type) {
		case *v1.Node:
			name = o.Name
		case *v1.Pod:
			name = o.Name
		}
		if name != "" && name == broken {
			return fwk.Queue, errors.New("hint failed")
		}
		if hint, ok := answers[name]; ok {
			return hint, nil
		}
		return otherwise, nil
	}
}

// gateOnPodUpdate queues when the update raises the pod's priority above 0.
func gateOnPodUpdate(_ klog.Logger, _ *v1.Pod, _, newObj interface{}) (fwk.QueueingHint, error) {
	if p, ok := newObj.(*v1.Pod); ok && p.Spec.Priority != nil && *p.Spec.Priority > 0 {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// lockstepProfile is the profile's queue options.
func lockstepProfile() []queue.Option {
	m := queue.QueueingHintMap{}
	register := func(event fwk.ClusterEvent, plugin string, fn hintFn) {
		m[event] = append(m[event], &queue.QueueingHintFunction{PluginName: plugin, QueueingHintFn: fn})
	}
	register(framework.EventUnscheduledPodUpdate, lockstepGate, gateOnPodUpdate)
	register(framework.EventAssignedPodDelete, nodeResourcesFit,
		byName(map[string]fwk.QueueingHint{"small": fwk.QueueSkip}, "broken", fwk.Queue))
	register(events["NodeAdd"], nodeResourcesFit,
		byName(map[string]fwk.QueueingHint{"big": fwk.Queue}, "broken", fwk.QueueSkip))
	register(events["NodeUpdate"], nodeResourcesFit,
		byName(map[string]fwk.QueueingHint{"big": fwk.Queue}, "", fwk.QueueSkip))
	register(events["NodeUpdate"], lockstepClaims,
		byName(map[string]fwk.QueueingHint{"ready": fwk.Queue}, "broken", fwk.QueueSkip))
	register(events["PodGroupAdd"], lockstepClaims, answer(fwk.Queue))
	pre := map[string]map[string]fwk.PreEnqueuePlugin{"": {lockstepGate: lockstepGatePlugin{}}}
	return []queue.Option{
		queue.WithQueueingHintMapPerProfile(queue.QueueingHintMapPerProfile{"": m}),
		queue.WithPreEnqueuePluginMap(pre),
	}
}
