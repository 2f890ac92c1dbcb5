"""The pure core: the data model, labels, chunking, aggregation, claim-sampling rules, metrics and detection metrics;
no I/O, no model, imports nothing above it."""
