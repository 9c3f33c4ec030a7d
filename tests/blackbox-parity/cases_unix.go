package main

// The cases of blackbox_exporter's prober/unix_test.go (v0.28.0's unix prober).

import (
	"net"
	"path/filepath"
)

func init() {
	add(tcase{
		name:   "unix/TestUnixConnection",
		module: "prober: unix\ntimeout: 2s\n",
		setup: func(env *caseEnv) string {
			path := filepath.Join(env.dir, "unix.sock")
			ln, err := net.Listen("unix", path)
			if err != nil {
				panic(err)
			}
			env.onClose(func() { ln.Close() })
			go acceptLoop(ln, func(c net.Conn) {})
			return path
		},
	})
	add(tcase{
		name:   "unix/TestUnixConnectionFails",
		module: "prober: unix\ntimeout: 2s\n",
		setup: func(env *caseEnv) string {
			return filepath.Join(env.dir, "non-existent-socket")
		},
	})
}
