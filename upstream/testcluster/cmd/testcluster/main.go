// Command testcluster is the Kubernetes API server gangway's end-to-end tests run against:
// etcd (go.etcd.io/etcd/server/v3's embed package) and kube-apiserver, both from the releases
// k8s.io/kubernetes v1.37.2 builds with, in one process, with the GenericWorkload gate and
// scheduling.k8s.io/v1beta1 on so that PodGroups are served. Nodes are API objects (no
// kubelet), as in kube-scheduler's own scheduler_perf.
//
//	testcluster serve --data-dir DIR      # serves until SIGTERM or SIGINT
//	testcluster kube-scheduler ARGS...    # kube-scheduler v1.37.2, built into the same binary
//
// serve writes DIR/kubeconfig (a token with cluster-admin rights, the cluster's own CA) once
// the server is ready, and prints "ready <kubeconfig>" on standard output. Started again on the
// same DIR it keeps its data, its ports and its credentials: a client's kubeconfig still works
// after a restart.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "serve":
		if err := serve(os.Args[2:]); err != nil {
			fmt.Fprintf(os.Stderr, "testcluster: %v\n", err)
			os.Exit(1)
		}
	case "kube-scheduler":
		cmd := scheduler.NewSchedulerCommand()
		cmd.SetArgs(os.Args[2:])
		if err := cmd.Execute(); err != nil {
			os.Exit(1)
		}
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: testcluster serve --data-dir DIR [--etcd-fsync]\n"+
		"       testcluster kube-scheduler [kube-scheduler flags]")
	os.Exit(2)
}

// serve runs etcd and kube-apiserver on dir until a signal stops the API server.
func serve(args []string) error {
	flags := flag.NewFlagSet("serve", flag.ContinueOnError)
	dataDir := flags.String("data-dir", "", "where etcd's data, the credentials, the ports and the kubeconfig live (created if missing)")
	fsync := flags.Bool("etcd-fsync", false, "fsync etcd's writes (off: a test cluster trades durability across a machine crash for speed; a killed process loses nothing)")
	readyTimeout := flags.Duration("ready-timeout", 3*time.Minute, "how long to wait for the API server to become ready")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *dataDir == "" {
		return errors.New("--data-dir is required")
	}
	dir, err := filepath.Abs(*dataDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("data dir %s: %w", dir, err)
	}
	layout, err := prepare(dir)
	if err != nil {
		return err
	}

	etcd, err := startEtcd(layout, *fsync)
	if err != nil {
		return err
	}
	defer etcd.Close()

	// The API server's command takes SIGTERM and SIGINT for itself when it is built (its
	// graceful shutdown); etcd is closed once it has returned.
	cmd := apiserver.NewAPIServerCommand()
	cmd.SetArgs(apiserverArgs(layout))
	served := make(chan error, 1)
	go func() { served <- cmd.Execute() }()

	ctx, cancel := context.WithTimeout(context.Background(), *readyTimeout)
	defer cancel()
	if err := waitReady(ctx, layout, served); err != nil {
		return err
	}
	if err := layout.writeKubeconfig(); err != nil {
		return err
	}
	fmt.Printf("ready %s\n", layout.kubeconfig)

	select {
	case err := <-served:
		return err
	case err := <-etcd.Err():
		return fmt.Errorf("etcd stopped: %w", err)
	}
}

// startEtcd starts an embedded single-member etcd on the layout's client and peer ports.
func startEtcd(l *layout, fsync bool) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = "testcluster"
	cfg.Dir = filepath.Join(l.dir, "etcd")
	cfg.ListenClientUrls = []url.URL{mustURL(l.etcdClientURL())}
	cfg.AdvertiseClientUrls = cfg.ListenClientUrls
	cfg.ListenPeerUrls = []url.URL{mustURL(l.etcdPeerURL())}
	cfg.AdvertisePeerUrls = cfg.ListenPeerUrls
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "warn"
	cfg.UnsafeNoFsync = !fsync
	e, err := embed.StartEtcd(cfg)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("etcd on %s (is another testcluster serving %s?): %w",
			l.etcdClientURL(), l.dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("etcd on %s: %w", l.etcdClientURL(), err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case <-time.After(time.Minute):
		e.Close()
		return nil, errors.New("etcd was not ready within a minute")
	}
}

// apiserverArgs are kube-apiserver's flags for the layout: the cluster's own serving
// certificate and token file, RBAC, PodGroups served, no admission plugin that needs a
// controller the test cluster does not run.
func apiserverArgs(l *layout) []string {
	return []string{
		"--etcd-servers=" + l.etcdClientURL(),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// Only one server, on loopback: no `kubernetes` Service endpoints to reconcile (the
		// lease reconciler refuses a loopback address).
		"--endpoint-reconciler-type=none",
		fmt.Sprintf("--secure-port=%d", l.ports.APIServer),
		"--tls-cert-file=" + l.servingCert,
		"--tls-private-key-file=" + l.servingKey,
		"--client-ca-file=" + l.caCert,
		"--token-auth-file=" + l.tokens,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + l.serviceAccountKey,
		"--service-account-signing-key-file=" + l.serviceAccountKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		// The ServiceAccount admission plugin wants each namespace's default account, which
		// kube-controller-manager creates; the test cluster runs no controller manager.
		// TaintNodesByCondition taints every new Node not-ready until the node lifecycle
		// controller (kube-controller-manager, again) sees it Ready: with no controller and no
		// kubelet, Nodes made as API objects would stay tainted (Kubernetes' own integration
		// test servers turn it off too).
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
		"--feature-gates=GenericWorkload=true",
		"--runtime-config=scheduling.k8s.io/v1beta1=true",
		"--cert-dir=" + filepath.Join(l.dir, "certs"),
		"--v=0",
	}
}

// waitReady polls /readyz until the API server answers ok, it stops, or ctx ends.
func waitReady(ctx context.Context, l *layout, served <-chan error) error {
	client, err := l.httpClient()
	if err != nil {
		return err
	}
	ticker := time.NewTicker(200 * time.Millisecond)
	defer ticker.Stop()
	var last error
	for {
		select {
		case err := <-served:
			return fmt.Errorf("kube-apiserver stopped before it was ready: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver was not ready on %s in time: %v", l.serverURL(), last)
		case <-ticker.C:
		}
		last = l.ready(ctx, client)
		if last == nil {
			return nil
		}
	}
}
