# SPDX-License-Identifier: MIT
# Synthetic step records (docs/design.md shapes, the incident's numbers) for the report tests: sourced.

# write_records DIR: a finished fresh-install swap of dgx4 that passes everything: preflight
# (the clone-trap finding: verdict trap, raw clone impossible, both other paths possible),
# backup, restore, verify, and accept with the engine gates run.
write_records() {
	local d=$1
	mkdir -p "$d"
	cat >"$d/preflight.json" <<'EOF'
{
  "schema": "swaptool/1", "step": "preflight", "version": "0.1.0", "host": "dgx4",
  "started": "2026-11-04T10:00:00Z", "finished": "2026-11-04T10:00:02Z", "verdict": "trap",
  "checks": [
    { "id": "raw-clone", "status": "fail", "summary": "target is 48,009,314,304 bytes smaller: a raw clone cannot fit" },
    { "id": "gpt-backup-header", "status": "fail", "summary": "backup GPT header at LBA 4,000,797,359 is past the target's last LBA 3,907,029,167",
      "source_lba": 4000797359, "target_last_lba": 3907029167 },
    { "id": "partition-fit", "status": "fail", "summary": "partition 2 ends past the target's last usable LBA" },
    { "id": "fs-fit", "status": "pass", "summary": "ext4 shrinks to fit: 1.33 TiB used" },
    { "id": "lba-format", "status": "pass", "summary": "512-byte LBAs on both" },
    { "id": "drive-class", "status": "warn", "summary": "KingSpec XG7000: DRAM-less, 40 MB HMB" },
    { "id": "health", "status": "pass", "summary": "media_errors 0" }
  ],
  "source": { "path": "/dev/nvme0", "size_bytes": 2048408248320, "lba_size": 512, "lba_count": 4000797360,
    "model": "XG7000-2TB 2242", "firmware": "GT0d9d63", "serial": null,
    "partition_table": { "type": "gpt", "first_usable_lba": 34, "last_usable_lba": 4000797326, "backup_header_lba": 4000797359, "partitions": [] } },
  "target": { "spec": "2000398934016", "size_bytes": 2000398934016, "lba_size": 512, "lba_count": 3907029168, "last_usable_lba": 3907029134 },
  "delta_bytes": -48009314304,
  "paths": { "raw_clone": { "possible": false }, "fs_clone": { "possible": true, "partitions": [] },
    "fresh_install": { "possible": true, "refetchable_bytes": 1215000000000, "irreplaceable_bytes": 9600 } }
}
EOF
	cat >"$d/backup.json" <<'EOF'
{
  "schema": "swaptool/1", "step": "backup", "version": "0.1.0", "host": "dgx4",
  "started": "2026-11-04T10:05:00Z", "finished": "2026-11-04T10:05:01Z", "verdict": "pass",
  "checks": [ { "id": "required", "status": "pass", "summary": "controller.key is in the backup" },
              { "id": "read-back", "status": "pass", "summary": "42 entries read back, hashes match" } ],
  "archive": { "path": "/home/nv/dgx4-swap-backup-20261104/dgx4-config.tar.gz", "bytes": 9830,
    "sha256": "9f2c1e0b5a7d3c4e8f6a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f67", "entries": 42 }
}
EOF
	cat >"$d/restore.json" <<'EOF'
{
  "schema": "swaptool/1", "step": "restore", "version": "0.1.0", "host": "dgx4",
  "started": "2026-11-05T09:00:00Z", "finished": "2026-11-05T09:00:01Z", "verdict": "pass",
  "checks": [ { "id": "extract", "status": "pass", "summary": "42 entries restored under /" } ]
}
EOF
	cat >"$d/verify.json" <<'EOF'
{
  "schema": "swaptool/1", "step": "verify", "version": "0.1.0", "host": "dgx4",
  "started": "2026-11-05T09:01:00Z", "finished": "2026-11-05T09:01:01Z", "verdict": "pass",
  "checks": [ { "id": "manifest", "status": "pass", "summary": "42 of 42 entries match" },
              { "id": "fstab", "status": "pass", "summary": "every UUID in /etc/fstab resolves" } ],
  "archive": { "path": "/home/nv/dgx4-swap-backup-20261104/dgx4-config.tar.gz", "bytes": 9830,
    "sha256": "9f2c1e0b5a7d3c4e8f6a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f67", "entries": 42 }
}
EOF
	cat >"$d/accept.json" <<'EOF'
{
  "schema": "swaptool/1", "step": "accept", "version": "0.1.0", "host": "dgx4",
  "started": "2026-11-05T10:00:00Z", "finished": "2026-11-05T11:30:00Z", "verdict": "pass",
  "checks": [ { "id": "rand16-iops", "status": "pass", "summary": "rand16: 118.2 K IOPS >= 60 K" } ],
  "target": { "path": "/dev/nvme0n1", "size_bytes": 2000398934016, "working_set_bytes": 105226698752, "offset_bytes": 947586117632 },
  "runs": [
    { "name": "rand16", "mode": "randread", "block_size": 4096, "inflight": 16, "duration_s": 15, "ios": 1773000,
      "iops": 118200.5, "mb_s": 484.1, "lat_us": { "min": 41, "p50": 121, "p90": 180, "p99": 320, "p99_9": 610, "max": 2100, "mean": 135.2 },
      "over_200ms": 0, "over_1s": 0, "over_5s": 0 },
    { "name": "rand64", "mode": "randread", "block_size": 4096, "inflight": 64, "duration_s": 20, "ios": 4100000,
      "iops": 205000, "mb_s": 839.7, "lat_us": { "min": 55, "p50": 290, "p90": 480, "p99": 900, "p99_9": 1500, "max": 5200, "mean": 310.5 },
      "over_200ms": 0, "over_1s": 0, "over_5s": 0 },
    { "name": "seq", "mode": "seqread", "block_size": 1048576, "inflight": 4, "duration_s": 1.4, "ios": 4096,
      "iops": 2860, "mb_s": 3000.2, "lat_us": { "min": 900, "p50": 1350, "p90": 1500, "p99": 1800, "p99_9": 2100, "max": 2400, "mean": 1390 } }
  ],
  "sweep": [
    { "name": "sweep16", "working_set_bytes": 2147483648, "iops": 121000 },
    { "name": "sweep16", "working_set_bytes": 21474836480, "iops": 119000 },
    { "name": "sweep16", "working_set_bytes": 105226698752, "iops": 118200 }
  ],
  "gates": [
    { "name": "rand16-iops", "run": "rand16", "status": "pass", "threshold": 60000, "measured": 118200.5, "unit": "IOPS", "op": ">=" },
    { "name": "rand16-p50", "run": "rand16", "status": "pass", "threshold": 250, "measured": 121, "unit": "us", "op": "<=" },
    { "name": "rand64-iops", "run": "rand64", "status": "pass", "threshold": 120000, "measured": 205000, "unit": "IOPS", "op": ">=" },
    { "name": "rand64-p99.9", "run": "rand64", "status": "pass", "threshold": 2000, "measured": 1500, "unit": "us", "op": "<=" },
    { "name": "seq-mb_s", "run": "seq", "status": "pass", "threshold": 2500, "measured": 3000.2, "unit": "MB/s", "op": ">=" },
    { "name": "engine-cold-boot-157k", "status": "pass", "threshold": "exit 0", "measured": 0, "unit": "exit code" },
    { "name": "engine-full-bench", "status": "pass", "threshold": "exit 0", "measured": 0, "unit": "exit code" }
  ],
  "engine_gates_run": true
}
EOF
}

# dgx4_accept FILE: the incident's dgx4 XG7000 numbers at 98 GB (the failing candidate), no engine gates.
dgx4_accept() {
	cat >"$1" <<'EOF'
{
  "schema": "swaptool/1", "step": "accept", "version": "0.1.0", "host": "dgx4",
  "started": "2026-11-04T09:00:00Z", "finished": "2026-11-04T09:01:00Z", "verdict": "fail",
  "checks": [ { "id": "rand16-iops", "status": "fail", "summary": "rand16: 12.9 K IOPS < 60 K" } ],
  "target": { "path": "/dev/nvme0n1", "size_bytes": 2048408248320, "working_set_bytes": 105226698752, "offset_bytes": 0 },
  "runs": [
    { "name": "rand16", "mode": "randread", "inflight": 16, "iops": 12900, "mb_s": 52.8, "lat_us": { "p50": 1183, "p99_9": 4600 } },
    { "name": "rand64", "mode": "randread", "inflight": 64, "iops": 24800, "mb_s": 101.6, "lat_us": { "p50": 2450, "p99_9": 10500 } },
    { "name": "seq", "mode": "seqread", "inflight": 4, "iops": 1810, "mb_s": 1900, "lat_us": { "p50": 2100, "p99_9": 4000 } }
  ],
  "gates": [
    { "name": "rand16-iops", "status": "fail", "threshold": 60000, "measured": 12900 },
    { "name": "rand16-p50", "status": "fail", "threshold": 250, "measured": 1183 },
    { "name": "rand64-iops", "status": "fail", "threshold": 120000, "measured": 24800 },
    { "name": "rand64-p99.9", "status": "fail", "threshold": 2000, "measured": 10500 },
    { "name": "seq-mb_s", "status": "fail", "threshold": 2500, "measured": 1900 }
  ],
  "engine_gates_run": false
}
EOF
}

# dgx5_accept FILE: the reference node (ESL01), as a passing accept record.
dgx5_accept() {
	cat >"$1" <<'EOF'
{
  "schema": "swaptool/1", "step": "accept", "version": "0.1.0", "host": "dgx5",
  "started": "2026-11-04T09:00:00Z", "finished": "2026-11-04T09:01:00Z", "verdict": "pass",
  "checks": [],
  "target": { "path": "/dev/nvme0n1", "size_bytes": 1000204886016, "working_set_bytes": 105226698752, "offset_bytes": 0 },
  "runs": [
    { "name": "rand16", "mode": "randread", "inflight": 16, "iops": 80000, "mb_s": 327.7, "lat_us": { "p50": 200, "p99_9": 900 } },
    { "name": "rand64", "mode": "randread", "inflight": 64, "iops": 204000, "mb_s": 835.6, "lat_us": { "p50": 283, "p99_9": 1600 } },
    { "name": "seq", "mode": "seqread", "inflight": 4, "iops": 2860, "mb_s": 3000, "lat_us": { "p50": 1300, "p99_9": 2000 } }
  ],
  "gates": [
    { "name": "rand16-iops", "status": "pass", "threshold": 60000, "measured": 80000 },
    { "name": "rand16-p50", "status": "pass", "threshold": 250, "measured": 200 },
    { "name": "rand64-iops", "status": "pass", "threshold": 120000, "measured": 204000 },
    { "name": "rand64-p99.9", "status": "pass", "threshold": 2000, "measured": 1600 },
    { "name": "seq-mb_s", "status": "pass", "threshold": 2500, "measured": 3000 }
  ],
  "engine_gates_run": false
}
EOF
}

# flip_byte FILE OFFSET: xor one byte of FILE with 1 (OFFSET from the start; negative from the end).
flip_byte() {
	local f=$1 off=$2 n b
	n=$(stat -c %s "$f")
	[ "$off" -lt 0 ] && off=$((n + off))
	b=$(od -An -tu1 -j "$off" -N1 "$f" | tr -d ' ')
	printf "$(printf '\\%03o' $((b ^ 1)))" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none
}

# unarmour FILE OUT / armour KIND IN OUT: between an OpenSSH armour and its raw bytes.
unarmour() { sed '1d;$d' "$1" | tr -d '\r\n' | base64 -d >"$2"; }
armour() {
	{ echo "-----BEGIN $1-----"; base64 -w 70 "$2"; echo "-----END $1-----"; } >"$3"
}
