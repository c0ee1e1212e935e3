"""Tools around training: the quickstart (``make demo``), shipping, plots, the rule network, benchmarks, critic export."""
