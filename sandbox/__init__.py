"""A faithful local sandbox of Korean public APIs: the live endpoints for tests, demos and benchmarks."""
