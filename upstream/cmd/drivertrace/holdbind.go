package drivertrace

// HoldBind, a PreBind plugin the trace's hold_bind and release_bind ops drive: a held pod's
// binding cycle stops at PreBind — past WaitOnPermit and the queue's Done, its node assumed
// in the cache, before the bind — until the trace releases it. A delete, another pod's
// cycles and time can then act on a pod in the middle of its binding, where the fake API
// server cannot hold a bind itself (its reactors run under the clientset's lock).

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

// holdBindName is the plugin's name in the profile.
const holdBindName = "HoldBind"

// holdBind holds the binding cycles of the pods the trace named, each until released.
type holdBind struct {
	mu   sync.Mutex
	held map[string]chan struct{}
}

func newHoldBind() *holdBind { return &holdBind{held: map[string]chan struct{}{}} }

func (h *holdBind) Name() string { return holdBindName }

// hold makes the pod's binding cycles stop at PreBind until release.
func (h *holdBind) hold(pod string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.held[pod]; ok {
		return fmt.Errorf("pod %s is held already", pod)
	}
	h.held[pod] = make(chan struct{})
	return nil
}

// release lets the pod's held binding cycle (if one is stopped) go on to its bind.
func (h *holdBind) release(pod string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch, ok := h.held[pod]
	if !ok {
		return fmt.Errorf("pod %s is not held", pod)
	}
	close(ch)
	delete(h.held, pod)
	return nil
}

// releaseAll releases every held pod (the end of a trace).
func (h *holdBind) releaseAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for pod, ch := range h.held {
		close(ch)
		delete(h.held, pod)
	}
}

func (h *holdBind) gate(pod string) (chan struct{}, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch, ok := h.held[pod]
	return ch, ok
}

// PreBindPreFlight runs PreBind for a held pod only: the others skip it, as the default
// profile's PreBind plugins skip a pod with nothing for them to do.
func (h *holdBind) PreBindPreFlight(_ context.Context, _ fwk.CycleState, p *v1.Pod, _ string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	if _, ok := h.gate(p.Name); ok {
		return nil, nil
	}
	return nil, fwk.NewStatus(fwk.Skip)
}

// PreBind waits for the pod's release.
func (h *holdBind) PreBind(ctx context.Context, _ fwk.CycleState, p *v1.Pod, _ string) *fwk.Status {
	if ch, ok := h.gate(p.Name); ok {
		select {
		case <-ch:
		case <-ctx.Done():
			return fwk.AsStatus(ctx.Err())
		}
	}
	return nil
}

// factory registers the one holdBind in the framework's registry.
func (h *holdBind) factory() func(context.Context, k8sruntime.Object, fwk.Handle) (fwk.Plugin, error) {
	return func(context.Context, k8sruntime.Object, fwk.Handle) (fwk.Plugin, error) { return h, nil }
}
