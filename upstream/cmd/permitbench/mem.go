package main

import (
	"os"
	"strconv"
	"strings"
)

// procStatusBytes reads a "kB" field (VmRSS, VmHWM) of /proc/self/status.
func procStatusBytes(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if v, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return v * 1024
				}
			}
		}
	}
	return -1
}

func rssBytes() int64     { return procStatusBytes("VmRSS") }
func peakRSSBytes() int64 { return procStatusBytes("VmHWM") }

func mb(b int64) float64 { return float64(b) / (1 << 20) }
