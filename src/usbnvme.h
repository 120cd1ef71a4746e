/* SPDX-License-Identifier: MIT */
/* The NVMe drive inside a USB enclosure, read through its bridge: NVMe Identify and the SMART / Health
 * log tunnelled in the bridge's vendor SCSI commands, for the bridge families whose tunnel is known. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bridge.h"
#include "nvme.h"

/* The bridge chips read through, by USB vendor and product (usbnvme_family_of). Any other bridge is
 * never sent a vendor command: what a CDB of one chip's protocol does on another chip is unknown. */
enum usbnvme_family {
	USBNVME_NONE,
	USBNVME_ASMEDIA, /* ASM2362, ASM2364, ASM2464PD: vendor CDB 0xe6, one exchange, data in */
	USBNVME_JMICRON, /* JMS583: ATA PASS-THROUGH (12) CDBs, three exchanges (command block, data, reply) */
	USBNVME_REALTEK, /* RTL9210, RTL9211: vendor CDB 0xe4, one exchange, data in */
};

/* "asmedia", "jmicron", "realtek" (the record's read_through); NULL for USBNVME_NONE. */
const char *usbnvme_family_name(enum usbnvme_family f);
/* "Realtek RTL9210/RTL9211": the chips of a family, for messages. */
const char *usbnvme_family_chips(enum usbnvme_family f);
/* The family of the bridge with these USB ids ("0bda", "9210"), USBNVME_NONE when it is not one
 * swaptool reads through. */
enum usbnvme_family usbnvme_family_of(const char *vendor_id, const char *product_id);

/* One SCSI exchange, as the transport carries it. */
enum usbnvme_dir { USBNVME_FROM_DEVICE, USBNVME_TO_DEVICE };
struct usbnvme_xfer {
	uint8_t cdb[16];
	unsigned cdb_len;
	enum usbnvme_dir dir;
	void *buf;                      /* FROM_DEVICE: zeroed before the exchange */
	size_t len;
	/* the outcome, filled by the transport */
	uint8_t status;                 /* SCSI status: 0 GOOD */
	uint16_t host_status, driver_status; /* SG_IO's: 0 when the host adapter and driver saw no error */
	size_t resid;                   /* bytes of len not transferred */
	uint8_t sense[32];
	size_t sense_len;
};

/* One exchange with the bridge: 0 when it took place (its outcome in x, judged by the caller),
 * negative errno with *why (allocated) when it could not be issued. */
typedef int (*usbnvme_transport_fn)(void *ud, struct usbnvme_xfer *x, char **why);

struct usbnvme_dev {
	enum usbnvme_family family;
	usbnvme_transport_fn xfer;
	void *ud;
};

/* An NVMe admin command to tunnel. Only the three of the allow-list pass (usbnvme_allowed): Identify
 * Controller, Identify Namespace 1, and the SMART / Health log; they read and change nothing. */
struct usbnvme_cmd {
	uint8_t opcode;
	uint32_t nsid;
	uint32_t cdw10;
	uint32_t len;                   /* bytes the drive returns */
};
extern const struct usbnvme_cmd usbnvme_identify_ctrl, usbnvme_identify_ns1, usbnvme_smart_log;

/* True when c is one of the allow-list's commands, field for field. */
bool usbnvme_allowed(const struct usbnvme_cmd *c);
/* Tunnel c through the bridge, its reply into buf (c->len bytes). -EPERM before any exchange when c is
 * not on the allow-list; -EIO when an exchange went wrong (a SCSI status, sense data, a host or driver
 * error, short data, a reply out of the bridge's protocol); the transport's errno when it could not
 * carry an exchange. *why (allocated) says which. */
int usbnvme_admin(const struct usbnvme_dev *d, const struct usbnvme_cmd *c, void *buf, char **why);

/* Read the drive through the bridge into *n: Identify Controller, Identify Namespace 1 and the SMART /
 * Health log, each checked as nvme_load_dumps checks the dumps, and each refused when it repeats the
 * reply before it (a bridge that answers with stale data). All or nothing: any refusal fails the read
 * with *why; n is then empty. n->read_through names the family, n->origin is `origin`. */
int usbnvme_read(const struct usbnvme_dev *d, const char *origin, struct nvme_info *n, char **why);

/* The real transport: SG_IO on a disk opened read-only (ud points to its fd), with a timeout. Root (or
 * CAP_SYS_RAWIO) is needed: the kernel passes vendor CDBs from no one else. */
int usbnvme_sg_xfer(void *ud, struct usbnvme_xfer *x, char **why);

/* A disk's USB bridge and, where its family is read through, the drive inside. */
struct usbnvme_through {
	struct disk_bridge bridge;      /* vendor_id NULL: the disk is not on USB */
	enum usbnvme_family family;     /* USBNVME_NONE: not probed (not on USB, or a bridge of no known family) */
	int r;                          /* probed: 0 read (n holds the drive), negative errno refused (why) */
	struct nvme_info n;
	char *why;
};
/* The bridge above the whole disk `sysname` ("sda") and, for a known family, the drive read through
 * it on `fd` (the disk opened read-only; -1: /dev/SYSNAME is opened read-only here and must be that
 * disk). Never fails: the outcome is in *t. */
void usbnvme_through(int fd, const char *sysname, struct usbnvme_through *t);
void usbnvme_through_free(struct usbnvme_through *t);
static inline void usbnvme_through_freep(struct usbnvme_through *t) { usbnvme_through_free(t); }
/* Read through: the family is known and the read succeeded. */
bool usbnvme_through_read(const struct usbnvme_through *t);
/* The LBA size of namespace 1 as read through the bridge, the one the drive presents in the slot;
 * 0 when not read. */
uint32_t usbnvme_slot_lba(const struct usbnvme_through *t);
