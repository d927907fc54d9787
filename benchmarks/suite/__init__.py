"""coopsim's benchmark suite (airspeed velocity): benchmarks/README.md."""
