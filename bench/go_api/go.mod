module libprober.invalid/bench/go_api

go 1.24

require github.com/libprober/prober/bindings/go v0.0.0

replace github.com/libprober/prober/bindings/go => ../../bindings/go
