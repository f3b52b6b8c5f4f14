// Package scripted holds the Permit plugins a differential trace scripts: each answers, in a
// scheduling cycle, what the trace's current op says for it (a code, a message, and for Wait
// its timeout), or allows when the op says nothing. gangtrace (beside the real GangScheduling
// plugin) and drivertrace (in the real scheduler's default profile) share this one copy.
package scripted

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

// Plugins are the scripted Permit plugins' names, in the order the framework runs them.
var Plugins = []string{"PermitA", "PermitB"}

// Script is what one scripted Permit plugin answers in a schedule op: a code (Success when
// absent), a message, and for Wait its timeout.
type Script struct {
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	WaitMs  int64  `json:"wait_ms,omitempty"`
}

// Validate says why a schedule op's scripts are not a trace's, as the Rust runner does: a
// plugin that is not scripted, or an unknown code.
func Validate(scripts map[string]Script) error {
	for name, sc := range scripts {
		known := false
		for _, pl := range Plugins {
			known = known || pl == name
		}
		if !known {
			return fmt.Errorf("no scripted permit plugin %s (there are %s)", name, strings.Join(Plugins, ", "))
		}
		switch sc.Code {
		case "", "Success", "Wait", "Unschedulable", "UnschedulableAndUnresolvable", "Error":
		default:
			return fmt.Errorf("unknown scripted code %q", sc.Code)
		}
	}
	return nil
}

// Plugin is a Permit plugin that answers what the current schedule op scripts for it.
type Plugin struct {
	name   string
	script *map[string]Script
}

// Name is the plugin's name.
func (s *Plugin) Name() string { return s.name }

// Permit answers the script: kube-scheduler's RunPermitPlugins folds it with the others.
func (s *Plugin) Permit(_ context.Context, _ fwk.CycleState, _ *v1.Pod, _ string) (*fwk.Status, time.Duration) {
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
	default: // refused by Validate before the cycle starts
		return fwk.AsStatus(fmt.Errorf("unknown scripted code %q", sc.Code)), 0
	}
}

// Factory builds the plugin `name`, reading the harness's current script.
func Factory(name string, script *map[string]Script) func(context.Context, k8sruntime.Object, fwk.Handle) (fwk.Plugin, error) {
	return func(context.Context, k8sruntime.Object, fwk.Handle) (fwk.Plugin, error) {
		return &Plugin{name: name, script: script}, nil
	}
}
