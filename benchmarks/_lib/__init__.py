"""What the scripts share: how a run is recorded (:mod:`.recording`) and the inputs it runs on (:mod:`.workloads`)."""
