module github.com/libprober/prober/bindings/go

go 1.24
