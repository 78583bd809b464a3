"""vitbench's shared infrastructure: registries, checkpoint I/O policy, run contracts, demo data."""
