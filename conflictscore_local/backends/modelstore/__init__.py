"""Model manifests and the store: locate, lock files, verify (the command and pull / bundle / unpack are in cli/ and
models/)."""
