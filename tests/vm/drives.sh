# SPDX-License-Identifier: MIT
# The incident's drives as the VM bench emulates them: sourced on the host (lib.sh) and in the guest (guest.sh).
# Sizes from docs/incident.md: 4,000,797,360 and 3,907,029,168 LBAs of 512 B. Serials: fixtures/nvme/*/values.txt.
SOURCE_BYTES=2048408248320
TARGET_BYTES=2000398934016
SOURCE_SERIAL=KS24XG7K2T0000D4
TARGET_SERIAL=A5KFB2400001MINI
RESULTS_SERIAL=VMBENCH-RESULTS
