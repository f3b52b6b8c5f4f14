package gangtrace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

// The Permit plugins a trace scripts beside GangScheduling, in the order the framework runs
// them (after the gang plugin, as a profile that adds plugins orders them).
var scriptedPlugins = []string{"PermitA", "PermitB"}

// Script is what one scripted Permit plugin answers in a schedule op: a code (Success when
// absent), a message, and for Wait its timeout.
type Script struct {
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	WaitMs  int64  `json:"wait_ms,omitempty"`
}

// validScripts says why a schedule op's scripts are not a trace's, as the Rust runner does:
// a plugin that is not scripted, or an unknown code.
func validScripts(scripts map[string]Script) error {
	for name, sc := range scripts {
		known := false
		for _, pl := range scriptedPlugins {
			known = known || pl == name
		}
		if !known {
			return fmt.Errorf("no scripted permit plugin %s (there are %s)", name, strings.Join(scriptedPlugins, ", "))
		}
		switch sc.Code {
		case "", "Success", "Wait", "Unschedulable", "UnschedulableAndUnresolvable", "Error":
		default:
			return fmt.Errorf("unknown scripted code %q", sc.Code)
		}
	}
	return nil
}

// scripted is a Permit plugin that answers what the current schedule op scripts for it.
type scripted struct {
	name   string
	script *map[string]Script
}

func (s *scripted) Name() string { return s.name }

// Permit answers the script: kube-scheduler's RunPermitPlugins folds it with the others.
func (s *scripted) Permit(_ context.Context, _ fwk.CycleState, _ *v1.Pod, _ string) (*fwk.Status, time.Duration) {
	sc, ok := (*s.script)[s.name]
	if !ok {
		return nil, 0
	}
	var reasons []string
	if sc.Message != "" {
		reasons = []string{sc.Message}
	}
	switch sc.Code {
	case "", "Success":
		return nil, 0
	case "Wait":
		return fwk.NewStatus(fwk.Wait, reasons...), time.Duration(sc.WaitMs) * time.Millisecond
	case "Unschedulable":
		return fwk.NewStatus(fwk.Unschedulable, reasons...), 0
	case "UnschedulableAndUnresolvable":
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, reasons...), 0
	case "Error":
		return fwk.AsStatus(errors.New(sc.Message)), 0
	default: // refused by validScripts before the cycle starts
		return fwk.AsStatus(fmt.Errorf("unknown scripted code %q", sc.Code)), 0
	}
}

// scriptedFactory builds the plugin `name`, reading the harness's current script.
func scriptedFactory(name string, script *map[string]Script) func(context.Context, k8sruntime.Object, fwk.Handle) (fwk.Plugin, error) {
	return func(context.Context, k8sruntime.Object, fwk.Handle) (fwk.Plugin, error) {
		return &scripted{name: name, script: script}, nil
	}
}
