# SPDX-License-Identifier: MIT
# The incident's drives as the VM bench emulates them: sourced on the host (lib.sh) and in the guest (guest.sh).
# Sizes from docs/incident.md: 4,000,797,360 and 3,907,029,168 LBAs of 512 B. Serials: fixtures/nvme/*/values.txt.
SOURCE_BYTES=2048408248320
TARGET_BYTES=2000398934016
SOURCE_SERIAL=KS24XG7K2T0000D4
TARGET_SERIAL=A5KFB2400001MINI
RESULTS_SERIAL=VMBENCH-RESULTS
# The kernel's line for an NVMe command that timed out (an emulated controller stalled): the
# host counts them on the console (lib.sh, vm_finish), the guest during a run (run_watched).
NVME_TIMEOUT_RE='nvme nvme[0-9]*: I/O .* timeout'
