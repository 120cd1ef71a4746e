/* SPDX-License-Identifier: MIT */
/* The NVMe drive inside a USB enclosure, read through its bridge's vendor SCSI commands (src/usbnvme.h).
 *
 * The CDB layouts are those smartmontools' sntasmedia, sntjmicron and sntrealtek device types use
 * (lib/scsinvme.cpp there); they are written here from the byte layouts, and the unit test replays
 * recorded exchanges of each family (fixtures/usbnvme/) and checks every byte of every CDB.
 *
 * Safety (docs/swaptool-safety.7): only the allow-list's three NVMe admin commands are ever
 * tunnelled, and they read: Identify (opcode 0x06) and Get Log Page (0x02). Each family has one
 * builder, and none of them can build a CDB that carries data to the drive's media: ASMedia's 0xe6
 * and Realtek's 0xe4 are the chips' data-in commands, and of JMicron's protocol only its command,
 * data-in and reply phases are built, never its data-out phase. JMicron's command phase does move
 * 512 bytes to the bridge (a data-out exchange): that is the NVMe command itself (a signature, the
 * opcode, the namespace and CDW10), which the bridge reads as a command, not data written to the
 * drive's media; it holds only the allow-list's opcodes. */
#include "util.h"
#include "usbnvme.h"
#include "disk.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <scsi/sg.h>

#define ASMEDIA_CDB 0xe6       /* ASMedia: NVMe admin command, data in */
#define REALTEK_CDB 0xe4       /* Realtek: NVMe admin command, data in */
#define JMICRON_CDB 0xa1       /* JMicron: ATA PASS-THROUGH (12), repurposed */
#define JMICRON_ADMIN 0x80     /* cdb[1] bit 7: an admin command */
#define JMICRON_COMMAND 0x0    /* cdb[1] protocol: the NVMe command block, to the bridge */
#define JMICRON_DATA_IN 0x2    /* the command's data, from the drive */
#define JMICRON_REPLY 0xf      /* the completion, from the bridge */
#define JMICRON_BLOCK 512u     /* the command block and the reply */
#define JMICRON_SIGNATURE 0x454d564eu /* "NVME" as a little-endian dword: the first of block and reply */

#define USBNVME_TIMEOUT_MS 10000 /* an identify answers in milliseconds; a hung bridge is not waited on */

/* NVMe admin opcodes and the log page the allow-list names. */
#define NVME_ADMIN_GET_LOG_PAGE 0x02
#define NVME_ADMIN_IDENTIFY 0x06
#define NVME_CNS_NS 0x00
#define NVME_CNS_CTRL 0x01
#define NVME_LOG_SMART 0x02
#define NVME_NSID_BROADCAST 0xffffffffu

/* The allow-list. The SMART log's CDW10: log id 2, NUMDL 127 (128 dwords = 512 bytes), RAE 0. */
const struct usbnvme_cmd usbnvme_identify_ctrl = { NVME_ADMIN_IDENTIFY, 0, NVME_CNS_CTRL, NVME_ID_CTRL_BYTES };
const struct usbnvme_cmd usbnvme_identify_ns1 = { NVME_ADMIN_IDENTIFY, 1, NVME_CNS_NS, NVME_ID_NS_BYTES };
const struct usbnvme_cmd usbnvme_smart_log = { NVME_ADMIN_GET_LOG_PAGE, NVME_NSID_BROADCAST,
					       NVME_LOG_SMART | (NVME_SMART_LOG_BYTES / 4 - 1) << 16,
					       NVME_SMART_LOG_BYTES };

static const struct usbnvme_cmd *const allow_list[] = { &usbnvme_identify_ctrl, &usbnvme_identify_ns1,
							 &usbnvme_smart_log };

/* The bridges read through, by USB id (smartmontools' drive database names the same ones for its
 * snt* types). Left out on purpose: 152d:0583, JMicron's default id, which its USB-to-SATA bridges
 * ship with too; there the first CDB of the JMicron protocol (ATA PASS-THROUGH, protocol 0) is an
 * ATA hardware reset of the SATA drive. Enclosures under their maker's own USB vendor id (Samsung,
 * SanDisk, ...) are not probed either: their chip cannot be told from the id alone. */
static const struct {
	const char *vid, *pid;
	enum usbnvme_family family;
} bridges[] = {
	{ "174c", "2362", USBNVME_ASMEDIA }, /* ASM2362 */
	{ "174c", "2364", USBNVME_ASMEDIA }, /* ASM2364 */
	{ "174c", "2463", USBNVME_ASMEDIA }, /* ASM2464PD on a USB 3 port */
	{ "152d", "a583", USBNVME_JMICRON }, /* JMS583 */
	{ "0bda", "9210", USBNVME_REALTEK }, /* RTL9210, RTL9210B */
	{ "0bda", "9211", USBNVME_REALTEK }, /* RTL9211 */
};

const char *usbnvme_family_name(enum usbnvme_family f)
{
	switch (f) {
	case USBNVME_ASMEDIA: return "asmedia";
	case USBNVME_JMICRON: return "jmicron";
	case USBNVME_REALTEK: return "realtek";
	case USBNVME_NONE: break;
	}
	return NULL;
}

const char *usbnvme_family_chips(enum usbnvme_family f)
{
	switch (f) {
	case USBNVME_ASMEDIA: return "ASMedia ASM2362/ASM2364/ASM2464PD";
	case USBNVME_JMICRON: return "JMicron JMS583";
	case USBNVME_REALTEK: return "Realtek RTL9210/RTL9211";
	case USBNVME_NONE: break;
	}
	return "no family swaptool reads through";
}

enum usbnvme_family usbnvme_family_of(const char *vendor_id, const char *product_id)
{
	if (!vendor_id || !product_id)
		return USBNVME_NONE;
	for (size_t i = 0; i < ARRAY_SIZE(bridges); i++)
		if (!strcasecmp(bridges[i].vid, vendor_id) && !strcasecmp(bridges[i].pid, product_id))
			return bridges[i].family;
	return USBNVME_NONE;
}

bool usbnvme_allowed(const struct usbnvme_cmd *c)
{
	for (size_t i = 0; i < ARRAY_SIZE(allow_list); i++)
		if (c->opcode == allow_list[i]->opcode && c->nsid == allow_list[i]->nsid &&
		    c->cdw10 == allow_list[i]->cdw10 && c->len == allow_list[i]->len)
			return true;
	return false;
}

/* The name of a command of the allow-list, for messages. */
static const char *cmd_name(const struct usbnvme_cmd *c)
{
	if (c->opcode == NVME_ADMIN_IDENTIFY)
		return c->cdw10 == NVME_CNS_CTRL ? "identify controller" : "identify namespace 1";
	return "the SMART / Health log";
}

static void put_be24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (unsigned i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The sense key, ASC and ASCQ of fixed (0x70, 0x71) or descriptor (0x72, 0x73) sense data; false
 * when it is of neither format. */
static bool sense_fields(const struct usbnvme_xfer *x, unsigned *key, unsigned *asc, unsigned *ascq)
{
	const uint8_t *s = x->sense;
	size_t n = x->sense_len < sizeof(x->sense) ? x->sense_len : sizeof(x->sense);
	unsigned code = n ? s[0] & 0x7f : 0;

	*asc = *ascq = 0;
	if ((code == 0x70 || code == 0x71) && n >= 3) {
		*key = s[2] & 0x0f;
		if (n >= 14) {
			*asc = s[12];
			*ascq = s[13];
		}
		return true;
	}
	if ((code == 0x72 || code == 0x73) && n >= 4) {
		*key = s[1] & 0x0f;
		*asc = s[2];
		*ascq = s[3];
		return true;
	}
	return false;
}

/* Whether one exchange went right: GOOD status, no host or driver error, no sense data beyond
 * "no sense" or "recovered", every byte transferred. */
static int judge_xfer(const struct usbnvme_dev *d, const struct usbnvme_xfer *x, const char *what, char **why)
{
	const char *fam = usbnvme_family_name(d->family);
	unsigned key = 0, asc = 0, ascq = 0;
	bool have_sense = x->sense_len > 0, known = have_sense && sense_fields(x, &key, &asc, &ascq);

	/* SG_IO's driver byte is 0, or DRIVER_SENSE (0x08) with sense data, judged below */
	if (x->host_status || (x->driver_status & ~0x08u))
		return set_why(why, -EIO, "%s through the %s bridge: host status 0x%02x, driver status 0x%02x (the USB link "
			       "or the bridge dropped the command)", what, fam, x->host_status, x->driver_status);
	if (have_sense && !known)
		return set_why(why, -EIO, "%s through the %s bridge: SCSI status 0x%02x with sense data of no known format",
			       what, fam, x->status);
	if (x->status || (known && key > 1)) {
		_cleanup_free_ char *sense = known ? xasprintf(", sense key 0x%x (ASC 0x%02x, ASCQ 0x%02x)", key, asc, ascq)
						   : xstrdup("");

		return set_why(why, -EIO, "%s through the %s bridge: SCSI status 0x%02x%s%s: the bridge or the drive refused it",
			       what, fam, x->status, x->status == 0x02 ? " (CHECK CONDITION)" : "", sense);
	}
	if (x->resid)
		return set_why(why, -EIO, "%s through the %s bridge: %zu of %zu bytes %s", what, fam,
			       x->resid > x->len ? 0 : x->len - x->resid, x->len,
			       x->dir == USBNVME_TO_DEVICE ? "sent" : "returned");
	return 0;
}

static int exchange(const struct usbnvme_dev *d, struct usbnvme_xfer *x, const char *what, char **why)
{
	int r;

	if (x->dir == USBNVME_FROM_DEVICE)
		memset(x->buf, 0, x->len);
	x->status = 0;
	x->host_status = x->driver_status = 0;
	x->resid = x->sense_len = 0;
	r = d->xfer(d->ud, x, why);
	if (r < 0)
		return r;
	return judge_xfer(d, x, what, why);
}

/* ASMedia: one 16-byte CDB, data in. The opcode in byte 1, CDW10's low byte in byte 3 and its high
 * half (NUMDU:NUMDL of a log page) in bytes 6-7; CDW13 and CDW12 big-endian in bytes 8-15 (zero for
 * every command of the allow-list). No namespace id: the bridge sends namespace 1's identify. */
static void cdb_asmedia(const struct usbnvme_cmd *c, struct usbnvme_xfer *x)
{
	x->cdb[0] = ASMEDIA_CDB;
	x->cdb[1] = c->opcode;
	x->cdb[3] = (uint8_t)c->cdw10;
	x->cdb[6] = (uint8_t)(c->cdw10 >> 24);
	x->cdb[7] = (uint8_t)(c->cdw10 >> 16);
	x->cdb_len = 16;
}

/* Realtek: one 16-byte CDB, data in. The length little-endian in bytes 1-2, the opcode in byte 3,
 * CDW10's low byte (the CNS, or the log id) in byte 4: the bridge derives the rest. */
static void cdb_realtek(const struct usbnvme_cmd *c, struct usbnvme_xfer *x)
{
	x->cdb[0] = REALTEK_CDB;
	x->cdb[1] = (uint8_t)c->len;
	x->cdb[2] = (uint8_t)(c->len >> 8);
	x->cdb[3] = c->opcode;
	x->cdb[4] = (uint8_t)c->cdw10;
	x->cdb_len = 16;
}

/* JMicron: a 12-byte CDB per phase, the protocol in byte 1's low nibble and the phase's length
 * big-endian in bytes 3-5. */
static void cdb_jmicron(uint8_t protocol, uint32_t len, struct usbnvme_xfer *x)
{
	x->cdb[0] = JMICRON_CDB;
	x->cdb[1] = JMICRON_ADMIN | protocol;
	put_be24(&x->cdb[3], len);
	x->cdb_len = 12;
}

/* JMicron's three phases: the command block (the only data-out: see the top of this file), the
 * data, the reply (signature, then the completion, its status in bits 31:17 of dword 5). */
static int admin_jmicron(const struct usbnvme_dev *d, const struct usbnvme_cmd *c, void *buf, const char *what,
			 char **why)
{
	uint8_t block[JMICRON_BLOCK] = { 0 }, reply[JMICRON_BLOCK];
	struct usbnvme_xfer x = { .dir = USBNVME_TO_DEVICE, .buf = block, .len = sizeof(block) };
	uint32_t status;
	int r;

	put_le32(&block[0], JMICRON_SIGNATURE);
	put_le32(&block[8], c->opcode);
	put_le32(&block[12], c->nsid);
	put_le32(&block[48], c->cdw10);
	cdb_jmicron(JMICRON_COMMAND, JMICRON_BLOCK, &x);
	r = exchange(d, &x, what, why);
	if (r < 0)
		return r;
	x = (struct usbnvme_xfer){ .dir = USBNVME_FROM_DEVICE, .buf = buf, .len = c->len };
	cdb_jmicron(JMICRON_DATA_IN, c->len, &x);
	r = exchange(d, &x, what, why);
	if (r < 0)
		return r;
	x = (struct usbnvme_xfer){ .dir = USBNVME_FROM_DEVICE, .buf = reply, .len = sizeof(reply) };
	cdb_jmicron(JMICRON_REPLY, JMICRON_BLOCK, &x);
	r = exchange(d, &x, what, why);
	if (r < 0)
		return r;
	if (get_le32(&reply[0]) != JMICRON_SIGNATURE)
		return set_why(why, -EIO, "%s through the jmicron bridge: its reply does not start with the protocol's "
			       "signature: not a JMicron NVMe bridge, or it lost the command", what);
	status = get_le32(&reply[20]) >> 17;
	if (status)
		return set_why(why, -EIO, "%s through the jmicron bridge: the drive answered NVMe status 0x%03x", what,
			       status);
	return 0;
}

int usbnvme_admin(const struct usbnvme_dev *d, const struct usbnvme_cmd *c, void *buf, char **why)
{
	struct usbnvme_xfer x = { .dir = USBNVME_FROM_DEVICE, .buf = buf, .len = c->len };
	const char *what;

	/* the allow-list first: nothing else is ever sent, whatever the family */
	if (!usbnvme_allowed(c))
		return set_why(why, -EPERM, "NVMe admin opcode 0x%02x (nsid 0x%x, CDW10 0x%08x, %u bytes) is not one "
			       "swaptool tunnels through a USB bridge: only Identify and the SMART log, which read",
			       c->opcode, c->nsid, c->cdw10, c->len);
	what = cmd_name(c);
	switch (d->family) {
	case USBNVME_ASMEDIA:
		cdb_asmedia(c, &x);
		return exchange(d, &x, what, why);
	case USBNVME_REALTEK:
		cdb_realtek(c, &x);
		return exchange(d, &x, what, why);
	case USBNVME_JMICRON:
		return admin_jmicron(d, c, buf, what, why);
	case USBNVME_NONE:
		break;
	}
	return set_why(why, -EOPNOTSUPP, "a USB bridge of no family swaptool reads through is not sent vendor commands");
}

static int refuse(const struct usbnvme_dev *d, const char *what, const char *reason, char **why)
{
	return set_why(why, -EBADMSG, "%s through the %s bridge: %s", what, usbnvme_family_name(d->family), reason);
}

/* Tunnel one command of the allow-list and refuse a reply that repeats the previous one's first
 * bytes: Realtek bridges are known to return the last data again where a command was not carried out. */
static int read_page(const struct usbnvme_dev *d, const struct usbnvme_cmd *c, uint8_t *buf, const uint8_t *prev,
		     char **why)
{
	int r = usbnvme_admin(d, c, buf, why);

	if (r < 0)
		return r;
	if (prev && !memcmp(buf, prev, c->len))
		return refuse(d, cmd_name(c), "the same bytes as the reply before it: stale data, not a reply", why);
	return 0;
}

static int read_pages(const struct usbnvme_dev *d, struct nvme_info *n, char **why)
{
	_cleanup_free_ uint8_t *ctrl = xcalloc(1, NVME_ID_CTRL_BYTES), *ns = xcalloc(1, NVME_ID_NS_BYTES);
	_cleanup_free_ uint8_t *smart = xcalloc(1, NVME_SMART_LOG_BYTES);
	const char *reason = NULL;
	int r;

	r = read_page(d, &usbnvme_identify_ctrl, ctrl, NULL, why);
	if (r < 0)
		return r;
	if (nvme_parse_id_ctrl(ctrl, NVME_ID_CTRL_BYTES, n, &reason) < 0)
		return refuse(d, "identify controller", reason, why);
	r = read_page(d, &usbnvme_identify_ns1, ns, ctrl, why);
	if (r < 0)
		return r;
	n->ns = xcalloc(1, sizeof(*n->ns));
	if (nvme_parse_id_ns(ns, NVME_ID_NS_BYTES, 1, &n->ns[0], &reason) < 0)
		return refuse(d, "identify namespace 1", reason, why);
	n->nns = 1;
	r = read_page(d, &usbnvme_smart_log, smart, ns, why);
	if (r < 0)
		return r;
	if (nvme_parse_smart(smart, NVME_SMART_LOG_BYTES, &n->smart, &reason) < 0)
		return refuse(d, "the SMART / Health log", reason, why);
	n->have_smart = true;
	return 0;
}

int usbnvme_read(const struct usbnvme_dev *d, const char *origin, struct nvme_info *n, char **why)
{
	int r;

	*n = (struct nvme_info){ 0 };
	r = read_pages(d, n, why);
	if (r < 0) {
		nvme_info_free(n);
		return r;
	}
	n->origin = xstrdup(origin);
	n->read_through = usbnvme_family_name(d->family);
	return 0;
}

int usbnvme_sg_xfer(void *ud, struct usbnvme_xfer *x, char **why)
{
	const int *fd = ud;
	sg_io_hdr_t h = {
		.interface_id = 'S',
		.dxfer_direction = x->dir == USBNVME_TO_DEVICE ? SG_DXFER_TO_DEV : SG_DXFER_FROM_DEV,
		.cmd_len = (unsigned char)x->cdb_len,
		.mx_sb_len = sizeof(x->sense),
		.dxfer_len = (unsigned)x->len,
		.dxferp = x->buf,
		.cmdp = x->cdb,
		.sbp = x->sense,
		.timeout = USBNVME_TIMEOUT_MS,
	};
	int r;

	if (ioctl(*fd, SG_IO, &h) < 0) {
		r = -errno;
		return set_why(why, r, "SG_IO: %s%s", strerror(-r),
			       r == -EPERM || r == -EACCES ? "; vendor SCSI commands need root (CAP_SYS_RAWIO)" : "");
	}
	x->status = h.status;
	x->host_status = h.host_status;
	x->driver_status = h.driver_status;
	/* a negative residue (more than was asked) is no transfer the caller can trust */
	x->resid = h.resid < 0 ? SIZE_MAX : (size_t)h.resid;
	x->sense_len = h.sb_len_wr;
	return 0;
}

/* /dev/SYSNAME read-only, and only when it is that whole disk (its major:minor is sysfs's). */
static int open_disk(const char *sysname, char **why)
{
	_cleanup_free_ char *dev = xasprintf("/dev/%s", sysname), *name = NULL;
	_cleanup_close_ int fd = open(dev, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	int r;

	if (fd < 0) {
		r = -errno;
		return set_why(why, r, "cannot open '%s' to read through its bridge: %s", dev, strerror(-r));
	}
	if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode) || sysfs_block_name(st.st_rdev, &name) < 0 ||
	    !streq(name, sysname))
		return set_why(why, -ENODEV, "'%s' is not the block device of disk %s", dev, sysname);
	r = fd;
	fd = -1;
	return r;
}

void usbnvme_through(int fd, const char *sysname, struct usbnvme_through *t)
{
	_cleanup_close_ int own = -1;
	_cleanup_free_ char *origin = NULL;
	struct usbnvme_dev d;
	struct stat st;

	*t = (struct usbnvme_through){ 0 };
	if (!sysname || bridge_of_disk(sysname, &t->bridge) < 0)
		return;
	t->family = usbnvme_family_of(t->bridge.vendor_id, t->bridge.product_id);
	if (t->family == USBNVME_NONE)
		return;
	if (fd < 0) {
		own = open_disk(sysname, &t->why);
		if (own < 0) {
			t->r = own;
			return;
		}
		fd = own;
	}
	if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode)) {
		t->r = set_why(&t->why, -ENOTBLK, "disk %s is not open as a block device", sysname);
		return;
	}
	origin = xasprintf("/dev/%s", sysname);
	d = (struct usbnvme_dev){ .family = t->family, .xfer = usbnvme_sg_xfer, .ud = &fd };
	t->r = usbnvme_read(&d, origin, &t->n, &t->why);
}

void usbnvme_through_free(struct usbnvme_through *t)
{
	if (!t)
		return;
	bridge_free(&t->bridge);
	nvme_info_free(&t->n);
	free(t->why);
	*t = (struct usbnvme_through){ 0 };
}

bool usbnvme_through_read(const struct usbnvme_through *t)
{
	return t->family != USBNVME_NONE && t->r == 0 && t->n.mn[0];
}

uint32_t usbnvme_slot_lba(const struct usbnvme_through *t)
{
	return usbnvme_through_read(t) && t->n.nns ? t->n.ns[0].lba_size : 0;
}
