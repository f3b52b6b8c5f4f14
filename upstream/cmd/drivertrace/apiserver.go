package drivertrace

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/kubernetes/pkg/features"
)

// The fake clientset is client-go's (an object tracker behind reactors). Three things of a
// real API server the scheduler relies on are missing from it and are added here, nothing
// else:
//
//   - resource versions: the tracker keeps its own counter but leaves the objects' own
//     metadata.resourceVersion as the client sent it, so every update reaches the informer
//     with an unchanged resourceVersion and the scheduler's updatePodInSchedulingQueue drops
//     it as a duplicate (oldPod.ResourceVersion == newPod.ResourceVersion). versioned stamps
//     each written object with a fresh version (one counter for all resources, as etcd's) and
//     a creationTimestamp on create;
//   - pods/binding: the tracker treats a subresource create as an update of the pod with the
//     submitted object, which for a v1.Binding is not stored at all. bind does what the
//     API server's BindingREST does (pkg/registry/core/pod/storage): the UID precondition,
//     refusing a deleted or assigned pod, setting spec.nodeName, clearing the nomination
//     (ClearingNominatedNodeNameAfterBinding), copying the binding's annotations and setting
//     the PodScheduled condition True;
//   - a trace's fail_bind: the next binding of that pod fails with an API error.

var (
	podsResource      = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	podGroupsResource = schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1alpha2", Resource: "podgroups"}
)

// errBindRejected is the API error a binding the trace fails gets.
func errBindRejected() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusInternalServerError,
		Reason:  metav1.StatusReasonInternalError,
		Message: "binding rejected by the trace",
	}}
}

// versioned is the clientset's tracker with resource versions and creation timestamps
// stamped on what is written.
type versioned struct {
	clienttesting.ObjectTracker
	mu   sync.Mutex
	last int64
}

func (t *versioned) stamp(obj runtime.Object, create bool) (runtime.Object, error) {
	obj = obj.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.last++
	m.SetResourceVersion(strconv.FormatInt(t.last, 10))
	t.mu.Unlock()
	if create && m.GetCreationTimestamp().Time.IsZero() {
		m.SetCreationTimestamp(metav1.NewTime(time.Now()))
	}
	return obj, nil
}

func (t *versioned) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	obj, err := t.stamp(obj, true)
	if err != nil {
		return err
	}
	return t.ObjectTracker.Create(gvr, obj, ns, opts...)
}

func (t *versioned) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.UpdateOptions) error {
	obj, err := t.stamp(obj, false)
	if err != nil {
		return err
	}
	return t.ObjectTracker.Update(gvr, obj, ns, opts...)
}

func (t *versioned) Patch(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	obj, err := t.stamp(obj, false)
	if err != nil {
		return err
	}
	return t.ObjectTracker.Patch(gvr, obj, ns, opts...)
}

// apiServer is the fake clientset with the additions above.
type apiServer struct {
	client  *fake.Clientset
	tracker *versioned

	mu       sync.Mutex
	failBind map[string]bool
}

func newAPIServer() *apiServer {
	client := fake.NewClientset()
	a := &apiServer{
		client:   client,
		tracker:  &versioned{ObjectTracker: client.Tracker()},
		failBind: map[string]bool{},
	}
	// Reactors are tried newest first: the binding, then every other verb through the
	// versioned tracker (the clientset's own object reaction is never reached; watches still
	// go to the same tracker underneath).
	client.PrependReactor("*", "*", clienttesting.ObjectReaction(a.tracker))
	client.PrependReactor("create", "pods", a.bind)
	return a
}

// failNextBind makes the next binding of the pod fail.
func (a *apiServer) failNextBind(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failBind[name] = true
}

func (a *apiServer) takeFailBind(name string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	fail := a.failBind[name]
	delete(a.failBind, name)
	return fail
}

func (a *apiServer) bind(action clienttesting.Action) (bool, runtime.Object, error) {
	if action.GetSubresource() != "binding" {
		return false, nil, nil
	}
	binding, ok := action.(clienttesting.CreateAction).GetObject().(*v1.Binding)
	if !ok {
		return true, nil, apierrors.NewBadRequest("not a binding")
	}
	if a.takeFailBind(binding.Name) {
		return true, nil, errBindRejected()
	}
	obj, err := a.tracker.Get(podsResource, action.GetNamespace(), binding.Name)
	if err != nil {
		return true, nil, err
	}
	pod := obj.(*v1.Pod)
	conflict := func(err error) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "pods/binding"}, binding.Name, err)
	}
	switch {
	case binding.UID != "" && binding.UID != pod.UID:
		return conflict(fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", binding.UID, pod.UID))
	case pod.DeletionTimestamp != nil:
		return conflict(fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name))
	case pod.Spec.NodeName != "":
		return conflict(fmt.Errorf("pod %v is already assigned to node %q", pod.Name, pod.Spec.NodeName))
	case len(pod.Spec.SchedulingGates) != 0:
		return conflict(fmt.Errorf("pod %v has non-empty .spec.schedulingGates", pod.Name))
	}
	pod.Spec.NodeName = binding.Target.Name
	if utilfeature.DefaultFeatureGate.Enabled(features.ClearingNominatedNodeNameAfterBinding) {
		pod.Status.NominatedNodeName = ""
	}
	if len(binding.Annotations) > 0 && pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	for k, v := range binding.Annotations {
		pod.Annotations[k] = v
	}
	podutil.UpdatePodCondition(&pod.Status, &v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue})
	if err := a.tracker.Update(podsResource, pod, pod.Namespace); err != nil {
		return true, nil, err
	}
	return true, binding, nil
}
