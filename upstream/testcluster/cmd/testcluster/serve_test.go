package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The test binary is also the server: run with TESTCLUSTER_SERVE=1 it serves instead of
// testing (one API server per process, as kube-apiserver's command takes the signals).
func TestMain(m *testing.M) {
	if os.Getenv("TESTCLUSTER_SERVE") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// server is a testcluster process serving dir.
type server struct {
	cmd        *exec.Cmd
	kubeconfig string
}

func start(t *testing.T, dir string) *server {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "--data-dir", dir)
	cmd.Env = append(os.Environ(), "TESTCLUSTER_SERVE=1")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if path, ok := strings.CutPrefix(lines.Text(), "ready "); ok {
				ready <- path
			}
		}
		close(ready)
	}()
	select {
	case path, ok := <-ready:
		if !ok {
			t.Fatalf("testcluster exited before it was ready: %v", cmd.Wait())
		}
		return &server{cmd: cmd, kubeconfig: path}
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("testcluster was not ready within 3 minutes")
	}
	return nil
}

// stop sends sig and waits for the process to end.
func (s *server) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if sig == syscall.SIGTERM && err != nil {
			t.Fatalf("testcluster after SIGTERM: %v", err)
		}
	case <-time.After(time.Minute):
		s.cmd.Process.Kill()
		t.Fatalf("testcluster did not stop within a minute of %v", sig)
	}
}

func (s *server) client(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	config, err := clientcmd.BuildConfigFromFlags("", s.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// A gang's objects as the e2e tests write them: a Node (no kubelet), a gang PodGroup
// (scheduling.k8s.io/v1beta1), a member pod naming it. They are all there after a graceful
// restart and after a kill -9, with the same kubeconfig.
func TestServesPodGroupsAndKeepsThemAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	first := start(t, dir)
	client := first.client(t)
	ctx := context.Background()

	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-0"},
		Status: corev1.NodeStatus{
			Capacity: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("4"),
				corev1.ResourceMemory: resource.MustParse("16Gi"),
				corev1.ResourcePods:   resource.MustParse("110"),
			},
		},
	}
	node.Status.Allocatable = node.Status.Capacity
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create node: %v", err)
	}
	group := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "default"},
		Spec: schedulingv1beta1.PodGroupSpec{
			SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
				Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: 2},
			},
		},
	}
	if _, err := client.SchedulingV1beta1().PodGroups("default").Create(ctx, group, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create PodGroup (is scheduling.k8s.io/v1beta1 served?): %v", err)
	}
	groupName := "train"
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "train-0", Namespace: "default"},
		Spec: corev1.PodSpec{
			SchedulerName:   "gangway-scheduler",
			SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: &groupName},
			Containers:      []corev1.Container{{Name: "main", Image: "busybox"}},
		},
	}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}

	first.stop(t, syscall.SIGTERM)
	second := start(t, dir)
	if second.kubeconfig != first.kubeconfig {
		t.Fatalf("kubeconfig moved: %s, then %s", first.kubeconfig, second.kubeconfig)
	}
	assertThere(t, client)

	second.stop(t, syscall.SIGKILL)
	third := start(t, dir)
	assertThere(t, client)
	third.stop(t, syscall.SIGTERM)
}

func assertThere(t *testing.T, client *kubernetes.Clientset) {
	t.Helper()
	ctx := context.Background()
	if _, err := client.CoreV1().Nodes().Get(ctx, "node-0", metav1.GetOptions{}); err != nil {
		t.Errorf("node after restart: %v", err)
	}
	group, err := client.SchedulingV1beta1().PodGroups("default").Get(ctx, "train", metav1.GetOptions{})
	if err != nil {
		t.Errorf("PodGroup after restart: %v", err)
	} else if gang := group.Spec.SchedulingPolicy.Gang; gang == nil || gang.MinCount != 2 {
		t.Errorf("PodGroup after restart: %+v", group.Spec)
	}
	got, err := client.CoreV1().Pods("default").Get(ctx, "train-0", metav1.GetOptions{})
	if err != nil {
		t.Errorf("pod after restart: %v", err)
	} else if g := got.Spec.SchedulingGroup; g == nil || g.PodGroupName == nil || *g.PodGroupName != "train" {
		t.Errorf("pod's scheduling group after restart: %+v", got.Spec.SchedulingGroup)
	}
}
