"""The GPU check run on an air-gapped GPU box (``gpu_check.sh``) and what travels with it (``gpu_carry.sh``)."""
