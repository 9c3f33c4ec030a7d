module libprober.invalid/bench/go_kubelet

go 1.24
