/* SPDX-License-Identifier: MIT */
/* NVMe identity and health: from a controller through libnvme, or from nvme-cli binary dumps. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exact sizes of the nvme-cli binary dumps (`nvme id-ctrl -b` and friends). */
#define NVME_ID_CTRL_BYTES 4096u
#define NVME_ID_NS_BYTES 4096u
#define NVME_SMART_LOG_BYTES 512u
#define NVME_ERROR_ENTRY_BYTES 64u
#define NVME_ERROR_LOG_MAX_ENTRIES 256u /* elpe is 0's based in one byte: at most 256 entries */

/* SMART data units are thousands of 512-byte units: 1 unit = 512,000 bytes (NVMe 1.4 §5.14.1.2). */
#define NVME_DATA_UNIT_BYTES 512000ull
/* hmpre/hmmin are in 4 KiB units: 10240 = 40 MiB (the incident's "40 MB"). */
#define NVME_HMB_UNIT_BYTES 4096ull
/* "Invalid Field in Command": status code type 0 (generic), status code 0x02. Hosts and tools
 * probing optional features cause it; it says nothing about the drive's health. */
#define NVME_SC_INVALID_FIELD_GENERIC 0x002

struct nvme_ns_info {
	uint32_t nsid;
	uint64_t nsze, ncap, nuse;  /* in LBAs */
	unsigned lba_format;        /* index of the LBA format in use (flbas) */
	uint32_t lba_size;          /* its data size in bytes */
	uint16_t metadata_size;
	uint64_t size_bytes;        /* nsze * lba_size */
};

struct nvme_smart {
	uint8_t critical_warning;
	uint16_t temperature_k;     /* composite temperature, Kelvin */
	uint8_t avail_spare, spare_thresh, percent_used;
	/* The 128-bit counters; a value beyond 64 bits is refused as foreign. */
	uint64_t data_units_read, data_units_written;
	uint64_t host_reads, host_writes, power_cycles, power_on_hours, unsafe_shutdowns;
	uint64_t media_errors, num_err_log_entries;
	uint32_t warning_temp_time, critical_comp_time; /* minutes */
	uint32_t thm_temp1_trans_count, thm_temp2_trans_count;
	uint32_t thm_temp1_total_time, thm_temp2_total_time; /* seconds */
};

struct nvme_errlog {
	unsigned slots;             /* entries in the page (used or not) */
	unsigned entries;           /* entries with a non-zero error count */
	unsigned benign;            /* of those: Invalid Field in Command */
	unsigned other;             /* the rest: worth a look */
	uint16_t first_other_status;/* SCT << 8 | SC of the newest non-benign entry */
};

struct nvme_pcie {
	char *current_speed, *max_speed; /* "16.0 GT/s PCIe" as sysfs writes it */
	unsigned current_width, max_width;
};

struct nvme_info {
	char *origin;               /* "/dev/nvme0", the dumps directory, or "/dev/sda" read through its bridge */
	bool from_dumps;
	const char *read_through;   /* the USB bridge family it was read through (src/usbnvme.h); NULL: not */
	char ctrl[32];              /* "nvme0"; empty for dumps */
	uint16_t vid, ssvid;
	char sn[21], mn[41], fr[9]; /* trimmed of the padding spaces */
	uint64_t tnvmcap;           /* bytes; 0 when the drive does not report it */
	uint32_t hmpre, hmmin;      /* 4 KiB units */
	uint8_t npss, apsta;
	uint16_t wctemp, cctemp;    /* Kelvin; 0 when not reported */
	struct nvme_ns_info *ns;
	size_t nns;
	bool have_smart;
	struct nvme_smart smart;
	bool have_errlog;
	struct nvme_errlog errlog;
	bool have_pcie;
	struct nvme_pcie pcie;
};

void nvme_info_free(struct nvme_info *n);
static inline void nvme_info_freep(struct nvme_info *n) { nvme_info_free(n); }
#define _cleanup_nvme_info_ __attribute__((cleanup(nvme_info_freep)))

/*
 * Parsers of the raw pages. Each checks the exact size (-EMSGSIZE) and refuses a page that
 * cannot be what it claims (-EBADMSG: all zeros, no vendor or model, a model that is not ASCII,
 * an LBA size outside 512..64 KiB, counters beyond 64 bits...). *why gets a static reason.
 */
int nvme_parse_id_ctrl(const void *buf, size_t len, struct nvme_info *n, const char **why);
int nvme_parse_id_ns(const void *buf, size_t len, uint32_t nsid, struct nvme_ns_info *ns, const char **why);
int nvme_parse_smart(const void *buf, size_t len, struct nvme_smart *s, const char **why);
int nvme_parse_error_log(const void *buf, size_t len, struct nvme_errlog *e, const char **why);

/*
 * Read `dir`/id-ctrl.bin (required), id-ns.bin (namespace 1), smart-log.bin and error-log.bin
 * (each optional). A file of the wrong size or content fails with *why (allocated) naming the
 * file and the size expected.
 */
int nvme_load_dumps(const char *dir, struct nvme_info *n, char **why);

/*
 * Read controller `ctrl` ("nvme0") through /dev/CTRL opened read-only: identify controller,
 * every active namespace, SMART log, error log (admin commands that read, never write), and the
 * PCIe link from `sysfs_root`/class/nvme/CTRL (sysfs_root NULL: "/sys").
 */
int nvme_read_device(const char *ctrl, const char *sysfs_root, struct nvme_info *n, char **why);
/* The PCIe link of `ctrl` from sysfs; -ENOENT when there is none (fabrics, virtual). */
int nvme_read_pcie(const char *ctrl, const char *sysfs_root, struct nvme_pcie *p);

/* The namespace with this nsid, or NULL. */
const struct nvme_ns_info *nvme_find_ns(const struct nvme_info *n, uint32_t nsid);
/* The nsid of a namespace device name: "nvme0n1" and "/dev/nvme0n1" -> 1; 0 when not one. */
uint32_t nvme_nsid_of(const char *name);

/* Units, the way docs/incident.md writes them. */
int nvme_temp_c(uint16_t kelvin);                           /* 315 -> 42 */
int nvme_data_units_bytes(uint64_t units, uint64_t *bytes); /* 26171875 -> 13,400,000,000,000 */
uint64_t nvme_hmb_bytes(uint32_t units);                    /* 10240 -> 41,943,040 */
uint64_t nvme_hmb_mb(uint32_t units);                       /* 10240 -> 40 (MiB, rounded) */
/* The error-log status of an entry: SCT << 8 | SC, from the status field (bit 0 is the phase tag). */
static inline uint16_t nvme_err_status(uint16_t status_field)
{
	return (uint16_t)((((status_field >> 9) & 0x7) << 8) | ((status_field >> 1) & 0xff));
}
