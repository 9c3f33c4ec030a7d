module libprober.invalid/bench/serve_load

go 1.24
