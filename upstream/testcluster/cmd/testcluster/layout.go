package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ports are the test cluster's TCP ports on 127.0.0.1, chosen free on the first start and
// kept in the data dir, so that a restart serves where clients already point.
type ports struct {
	APIServer  int `json:"apiserver"`
	EtcdClient int `json:"etcdClient"`
	EtcdPeer   int `json:"etcdPeer"`
}

// layout is a data dir's files: etcd's data, the credentials, the ports, the kubeconfig.
type layout struct {
	dir               string
	ports             ports
	caCert, caKey     string
	servingCert       string
	servingKey        string
	serviceAccountKey string
	tokens            string
	token             string
	kubeconfig        string
}

// prepare reads dir's layout, creating on the first start what it lacks: ports, a CA, a
// serving certificate for 127.0.0.1 and localhost signed by it, a service account signing
// key, and an admin token (group system:masters).
func prepare(dir string) (*layout, error) {
	l := &layout{
		dir:               dir,
		caCert:            filepath.Join(dir, "ca.crt"),
		caKey:             filepath.Join(dir, "ca.key"),
		servingCert:       filepath.Join(dir, "apiserver.crt"),
		servingKey:        filepath.Join(dir, "apiserver.key"),
		serviceAccountKey: filepath.Join(dir, "service-account.key"),
		tokens:            filepath.Join(dir, "tokens.csv"),
		kubeconfig:        filepath.Join(dir, "kubeconfig"),
	}
	if err := l.preparePorts(); err != nil {
		return nil, err
	}
	if err := l.prepareCertificates(); err != nil {
		return nil, err
	}
	if err := l.prepareToken(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *layout) preparePorts() error {
	path := filepath.Join(l.dir, "ports.json")
	if data, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(data, &l.ports); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	free, err := freePorts(3)
	if err != nil {
		return err
	}
	l.ports = ports{APIServer: free[0], EtcdClient: free[1], EtcdPeer: free[2]}
	data, err := json.Marshal(l.ports)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// freePorts are n ports free on 127.0.0.1 now (held together while chosen, so distinct).
func freePorts(n int) ([]int, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	var found []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("a free port on 127.0.0.1: %w", err)
		}
		listeners = append(listeners, l)
		found = append(found, l.Addr().(*net.TCPAddr).Port)
	}
	return found, nil
}

func (l *layout) prepareCertificates() error {
	if exists(l.caCert) && exists(l.caKey) && exists(l.servingCert) && exists(l.servingKey) &&
		exists(l.serviceAccountKey) {
		return nil
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "gangway testcluster CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	servingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	servingTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
	}
	servingDER, err := x509.CreateCertificate(rand.Reader, servingTemplate, ca, &servingKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	serviceAccountKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	for path, block := range map[string]*pem.Block{
		l.caCert:            {Type: "CERTIFICATE", Bytes: caDER},
		l.caKey:             ecKeyBlock(caKey),
		l.servingCert:       {Type: "CERTIFICATE", Bytes: servingDER},
		l.servingKey:        ecKeyBlock(servingKey),
		l.serviceAccountKey: {Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(serviceAccountKey)},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			return err
		}
	}
	return nil
}

func ecKeyBlock(key *ecdsa.PrivateKey) *pem.Block {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		panic(err) // a P-256 key always marshals
	}
	return &pem.Block{Type: "EC PRIVATE KEY", Bytes: der}
}

func (l *layout) prepareToken() error {
	if data, err := os.ReadFile(l.tokens); err == nil {
		token, _, ok := strings.Cut(string(data), ",")
		if !ok || token == "" {
			return fmt.Errorf("%s: no token in its first field", l.tokens)
		}
		l.token = token
		return nil
	}
	secret := make([]byte, 24)
	if _, err := io.ReadFull(rand.Reader, secret); err != nil {
		return err
	}
	l.token = hex.EncodeToString(secret)
	line := fmt.Sprintf("%s,admin,admin,\"system:masters\"\n", l.token)
	return os.WriteFile(l.tokens, []byte(line), 0o600)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func (l *layout) serverURL() string {
	return fmt.Sprintf("https://127.0.0.1:%d", l.ports.APIServer)
}

func (l *layout) etcdClientURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d", l.ports.EtcdClient)
}

func (l *layout) etcdPeerURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d", l.ports.EtcdPeer)
}

func mustURL(raw string) url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err) // built from a format above
	}
	return *u
}

// httpClient trusts the cluster's CA only.
func (l *layout) httpClient() (*http.Client, error) {
	pemCA, err := os.ReadFile(l.caCert)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemCA) {
		return nil, fmt.Errorf("%s: no certificate", l.caCert)
	}
	return &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}, nil
}

// ready is nil once GET /readyz answers 200 with the admin token.
func (l *layout) ready(ctx context.Context, client *http.Client) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.serverURL()+"/readyz", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+l.token)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// writeKubeconfig writes the admin's kubeconfig (written whole, then renamed into place, so
// a reader never sees half of it).
func (l *layout) writeKubeconfig() error {
	pemCA, err := os.ReadFile(l.caCert)
	if err != nil {
		return err
	}
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: testcluster
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: testcluster
  context:
    cluster: testcluster
    user: admin
current-context: testcluster
`, l.serverURL(), base64.StdEncoding.EncodeToString(pemCA), l.token)
	tmp := l.kubeconfig + ".tmp"
	if err := os.WriteFile(tmp, []byte(config), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, l.kubeconfig)
}
