/* SPDX-License-Identifier: MIT */
/* NVMe identity and health: raw-page parsers shared by the libnvme path and the nvme-cli dump path. */
#include "util.h"
#include "nvme.h"

#include <ctype.h>
#include <endian.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>

/* Not <libnvme.h>: its util.h defines a startswith() that clashes with ours. */
#include <nvme/ioctl.h>
#include <nvme/types.h>

/* The parsers read the pages through libnvme's structs; the sizes are the spec's. */
_Static_assert(sizeof(struct nvme_id_ctrl) == NVME_ID_CTRL_BYTES, "identify controller is 4096 bytes");
_Static_assert(sizeof(struct nvme_id_ns) == NVME_ID_NS_BYTES, "identify namespace is 4096 bytes");
_Static_assert(sizeof(struct nvme_smart_log) == NVME_SMART_LOG_BYTES, "SMART log is 512 bytes");
_Static_assert(sizeof(struct nvme_error_log_page) == NVME_ERROR_ENTRY_BYTES, "error-log entry is 64 bytes");

void nvme_info_free(struct nvme_info *n)
{
	if (!n)
		return;
	free(n->origin);
	free(n->ns);
	free(n->pcie.current_speed);
	free(n->pcie.max_speed);
	memset(n, 0, sizeof(*n));
}

static bool all_zero(const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* A 128-bit little-endian counter that must fit in 64 bits. */
static int le128_to_u64(const uint8_t b[16], uint64_t *out)
{
	uint64_t lo, hi;

	memcpy(&lo, b, 8);
	memcpy(&hi, b + 8, 8);
	if (le64toh(hi))
		return -EOVERFLOW;
	*out = le64toh(lo);
	return 0;
}

/*
 * A space-padded ASCII field (sn, mn, fr) into a C string. Padding may be spaces or NULs at the
 * end; a NUL or a byte outside printable ASCII before the last character means the page is not
 * an identify-controller page.
 */
static int ascii_field(const char *field, size_t len, char *out)
{
	size_t end = len;

	while (end > 0 && (field[end - 1] == ' ' || field[end - 1] == '\0'))
		end--;
	for (size_t i = 0; i < end; i++)
		if ((unsigned char)field[i] < 0x20 || (unsigned char)field[i] > 0x7e)
			return -EBADMSG;
	memcpy(out, field, end);
	out[end] = '\0';
	return 0;
}

int nvme_parse_id_ctrl(const void *buf, size_t len, struct nvme_info *n, const char **why)
{
	const struct nvme_id_ctrl *id = buf;
	uint64_t tnvmcap;

	if (len != NVME_ID_CTRL_BYTES) {
		*why = "an identify-controller page is 4096 bytes";
		return -EMSGSIZE;
	}
	if (all_zero(buf, len)) {
		*why = "all zeros: not an identify-controller page";
		return -EBADMSG;
	}
	if (ascii_field(id->sn, sizeof(id->sn), n->sn) < 0 || ascii_field(id->mn, sizeof(id->mn), n->mn) < 0 ||
	    ascii_field(id->fr, sizeof(id->fr), n->fr) < 0) {
		*why = "serial, model or firmware is not ASCII: not an identify-controller page";
		return -EBADMSG;
	}
	if (!n->mn[0] || le16toh(id->vid) == 0) {
		*why = "no PCI vendor id or no model number: not an identify-controller page";
		return -EBADMSG;
	}
	if (le128_to_u64(id->tnvmcap, &tnvmcap) < 0) {
		*why = "total NVM capacity beyond 2^64 bytes: not an identify-controller page";
		return -EBADMSG;
	}
	n->vid = le16toh(id->vid);
	n->ssvid = le16toh(id->ssvid);
	n->tnvmcap = tnvmcap;
	n->hmpre = le32toh(id->hmpre);
	n->hmmin = le32toh(id->hmmin);
	n->npss = id->npss;
	n->apsta = id->apsta;
	n->wctemp = le16toh(id->wctemp);
	n->cctemp = le16toh(id->cctemp);
	return 0;
}

int nvme_parse_id_ns(const void *buf, size_t len, uint32_t nsid, struct nvme_ns_info *ns, const char **why)
{
	const struct nvme_id_ns *id = buf;
	unsigned fmt;
	uint8_t ds;

	if (len != NVME_ID_NS_BYTES) {
		*why = "an identify-namespace page is 4096 bytes";
		return -EMSGSIZE;
	}
	if (all_zero(buf, len)) {
		*why = "all zeros: not an identify-namespace page (an inactive namespace?)";
		return -EBADMSG;
	}
	/* flbas bits 3:0 pick the format; bits 6:5 extend the index when there are more than 16. */
	fmt = (id->flbas & 0x0f) | (id->nlbaf >= 16 ? (unsigned)((id->flbas >> 5) & 0x3) << 4 : 0);
	ds = fmt < ARRAY_SIZE(id->lbaf) ? id->lbaf[fmt].ds : 0;
	*ns = (struct nvme_ns_info){
		.nsid = nsid,
		.nsze = le64toh(id->nsze),
		.ncap = le64toh(id->ncap),
		.nuse = le64toh(id->nuse),
		.lba_format = fmt,
		.metadata_size = le16toh(id->lbaf[fmt < 64 ? fmt : 0].ms),
	};
	if (fmt > id->nlbaf || ds < 9 || ds > 16) {
		*why = "the LBA format in use is not 512 B to 64 KiB: not an identify-namespace page";
		return -EBADMSG;
	}
	if (ns->nsze == 0 || ns->ncap > ns->nsze || ns->nuse > ns->ncap) {
		*why = "namespace size, capacity and utilization disagree: not an identify-namespace page";
		return -EBADMSG;
	}
	ns->lba_size = 1u << ds;
	if (u64_mul(ns->nsze, ns->lba_size, &ns->size_bytes) < 0) {
		*why = "namespace size beyond 2^64 bytes: not an identify-namespace page";
		return -EBADMSG;
	}
	return 0;
}

int nvme_parse_smart(const void *buf, size_t len, struct nvme_smart *s, const char **why)
{
	const struct nvme_smart_log *l = buf;
	int r = 0;

	if (len != NVME_SMART_LOG_BYTES) {
		*why = "a SMART/health log page is 512 bytes";
		return -EMSGSIZE;
	}
	if (all_zero(buf, len)) {
		*why = "all zeros: not a SMART/health log page (no composite temperature)";
		return -EBADMSG;
	}
	*s = (struct nvme_smart){
		.critical_warning = l->critical_warning,
		.temperature_k = (uint16_t)(l->temperature[0] | l->temperature[1] << 8),
		.avail_spare = l->avail_spare,
		.spare_thresh = l->spare_thresh,
		.percent_used = l->percent_used,
		.warning_temp_time = le32toh(l->warning_temp_time),
		.critical_comp_time = le32toh(l->critical_comp_time),
		.thm_temp1_trans_count = le32toh(l->thm_temp1_trans_count),
		.thm_temp2_trans_count = le32toh(l->thm_temp2_trans_count),
		.thm_temp1_total_time = le32toh(l->thm_temp1_total_time),
		.thm_temp2_total_time = le32toh(l->thm_temp2_total_time),
	};
	/* 0 K is no reading at all; 100 % is the most spare a drive can have. */
	if (s->temperature_k == 0 || s->avail_spare > 100 || s->spare_thresh > 100) {
		*why = "no composite temperature or spare above 100 %: not a SMART/health log page";
		return -EBADMSG;
	}
	r |= le128_to_u64(l->data_units_read, &s->data_units_read);
	r |= le128_to_u64(l->data_units_written, &s->data_units_written);
	r |= le128_to_u64(l->host_reads, &s->host_reads);
	r |= le128_to_u64(l->host_writes, &s->host_writes);
	r |= le128_to_u64(l->power_cycles, &s->power_cycles);
	r |= le128_to_u64(l->power_on_hours, &s->power_on_hours);
	r |= le128_to_u64(l->unsafe_shutdowns, &s->unsafe_shutdowns);
	r |= le128_to_u64(l->media_errors, &s->media_errors);
	r |= le128_to_u64(l->num_err_log_entries, &s->num_err_log_entries);
	if (r) {
		*why = "a counter beyond 2^64: not a SMART/health log page";
		return -EBADMSG;
	}
	return 0;
}

int nvme_parse_error_log(const void *buf, size_t len, struct nvme_errlog *e, const char **why)
{
	const struct nvme_error_log_page *p = buf;
	uint64_t newest = 0;

	if (len == 0 || len % NVME_ERROR_ENTRY_BYTES || len / NVME_ERROR_ENTRY_BYTES > NVME_ERROR_LOG_MAX_ENTRIES) {
		*why = "an error log is 1 to 256 entries of 64 bytes";
		return -EMSGSIZE;
	}
	*e = (struct nvme_errlog){ .slots = (unsigned)(len / NVME_ERROR_ENTRY_BYTES) };
	for (unsigned i = 0; i < e->slots; i++) {
		uint64_t count = le64toh(p[i].error_count);
		uint16_t sc = nvme_err_status(le16toh(p[i].status_field));

		if (count == 0) /* an unused slot */
			continue;
		e->entries++;
		if (sc == NVME_SC_INVALID_FIELD_GENERIC) {
			e->benign++;
			continue;
		}
		e->other++;
		if (count > newest) {
			newest = count;
			e->first_other_status = sc;
		}
	}
	return 0;
}

/* Read a dump of exactly `want` bytes (or, for want 0, a multiple of 64): *why names file and size. */
static int read_dump(const char *dir, const char *file, size_t want, bool optional, char **buf, size_t *len,
		     const char *how, char **why)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, file), *iwhy = NULL;
	/* No size cap here: a wrong size gets its own message below. Not blocking: a FIFO or a
	 * device planted as a dump is refused at once. */
	_cleanup_close_ int fd = open_input(path, 0, INPUT_NOFOLLOW, &iwhy);
	struct stat st;
	size_t max = want ? want : NVME_ERROR_ENTRY_BYTES * NVME_ERROR_LOG_MAX_ENTRIES;
	bool bad;
	int r;

	if (fd < 0) {
		r = fd;
		if (r == -ENOENT && optional)
			return 0;
		if (r == -ENOENT)
			return set_why(why, r, "cannot open dump '%s': %s; copy the output of '%s' into it", path, iwhy, how);
		return set_why(why, r, "dump '%s' cannot be used: %s; copy the output of '%s' into a regular file there",
			       path, iwhy, how);
	}
	if (fstat(fd, &st) < 0)
		return -errno;
	bad = want ? (uint64_t)st.st_size != want
		   : st.st_size == 0 || st.st_size % NVME_ERROR_ENTRY_BYTES || (uint64_t)st.st_size > max;
	if (bad && want)
		return set_why(why, -EMSGSIZE, "dump '%s' is %jd bytes, expected %zu (%s); copy it again from the node",
			       path, (intmax_t)st.st_size, want, how);
	if (bad)
		return set_why(why, -EMSGSIZE, "dump '%s' is %jd bytes, expected a multiple of 64 up to %zu (%s); copy it "
			       "again from the node", path, (intmax_t)st.st_size, max, how);
	/* The fd already checked, not the path again: capped at max, so a file that grows is refused. */
	{
		_cleanup_free_ char *b = xcalloc(1, max + 1);
		ssize_t n;
		size_t have = 0;

		while (have <= max && (n = read(fd, b + have, max + 1 - have)) != 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				r = -errno;
				return set_why(why, r, "cannot read dump '%s': %s", path, strerror(-r));
			}
			have += (size_t)n;
		}
		*len = have;
		*buf = TAKE_PTR(b);
	}
	if (*len > max || (!want && *len % NVME_ERROR_ENTRY_BYTES)) { /* changed under us */
		free(*buf);
		*buf = NULL;
		return set_why(why, -EMSGSIZE, "dump '%s' changed while it was read; copy it again from the node", path);
	}
	if (want && *len != want) { /* changed under us */
		free(*buf);
		*buf = NULL;
		return set_why(why, -EMSGSIZE, "dump '%s' is %zu bytes, expected %zu (%s)", path, *len, want, how);
	}
	return 1;
}

static int dump_bad(const char *dir, const char *file, const char *reason, char **why)
{
	return set_why(why, -EBADMSG,
		       "dump '%s/%s' is not what it claims: %s; copy it again from the node", dir, file, reason);
}

int nvme_load_dumps(const char *dir, struct nvme_info *n, char **why)
{
	_cleanup_free_ char *ctrl = NULL, *ns = NULL, *smart = NULL, *err = NULL;
	size_t len = 0;
	const char *reason = NULL;
	int r;

	*n = (struct nvme_info){ .origin = xstrdup(dir), .from_dumps = true };
	r = read_dump(dir, "id-ctrl.bin", NVME_ID_CTRL_BYTES, false, &ctrl, &len,
		      "nvme id-ctrl /dev/nvme0 -b > id-ctrl.bin", why);
	if (r < 0)
		return r;
	if (nvme_parse_id_ctrl(ctrl, len, n, &reason) < 0)
		return dump_bad(dir, "id-ctrl.bin", reason, why);

	r = read_dump(dir, "id-ns.bin", NVME_ID_NS_BYTES, true, &ns, &len,
		      "nvme id-ns /dev/nvme0n1 -b > id-ns.bin", why);
	if (r < 0)
		return r;
	if (r > 0) {
		n->ns = xcalloc(1, sizeof(*n->ns));
		if (nvme_parse_id_ns(ns, len, 1, &n->ns[0], &reason) < 0)
			return dump_bad(dir, "id-ns.bin", reason, why);
		n->nns = 1;
	}

	r = read_dump(dir, "smart-log.bin", NVME_SMART_LOG_BYTES, true, &smart, &len,
		      "nvme smart-log /dev/nvme0 -b > smart-log.bin", why);
	if (r < 0)
		return r;
	if (r > 0) {
		if (nvme_parse_smart(smart, len, &n->smart, &reason) < 0)
			return dump_bad(dir, "smart-log.bin", reason, why);
		n->have_smart = true;
	}

	r = read_dump(dir, "error-log.bin", 0, true, &err, &len, "nvme error-log /dev/nvme0 -b > error-log.bin",
		      why);
	if (r < 0)
		return r;
	if (r > 0) {
		if (nvme_parse_error_log(err, len, &n->errlog, &reason) < 0)
			return dump_bad(dir, "error-log.bin", reason, why);
		n->have_errlog = true;
	}
	return 0;
}

int nvme_read_pcie(const char *ctrl, const char *sysfs_root, struct nvme_pcie *p)
{
	_cleanup_free_ char *dir = xasprintf("%s/class/nvme/%s/device", sysfs_root ? sysfs_root : "/sys", ctrl);
	static const char *names[] = { "current_link_speed", "max_link_speed", "current_link_width",
				       "max_link_width" };
	char *v[4] = { 0 };
	int r = 0;

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		_cleanup_free_ char *path = xasprintf("%s/%s", dir, names[i]);

		r = read_attr(path, &v[i]);
		if (r < 0)
			break;
	}
	if (r == 0) {
		*p = (struct nvme_pcie){ .current_speed = v[0], .max_speed = v[1],
					 .current_width = (unsigned)strtoul(v[2], NULL, 10),
					 .max_width = (unsigned)strtoul(v[3], NULL, 10) };
		free(v[2]);
		free(v[3]);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		free(v[i]);
	return r;
}

/* libnvme returns -1 with errno, or a positive NVMe status: one negative errno for both. */
static int nvme_rc(int r)
{
	if (r < 0)
		return errno ? -errno : -EIO;
	return r > 0 ? -EIO : 0;
}

int nvme_read_device(const char *ctrl, const char *sysfs_root, struct nvme_info *n, char **why)
{
	_cleanup_free_ char *dev = xasprintf("/dev/%s", ctrl);
	_cleanup_free_ struct nvme_error_log_page *elog = NULL;
	_cleanup_close_ int fd = -1;
	struct nvme_id_ctrl id;
	struct nvme_ns_list list;
	struct nvme_smart_log smart;
	const char *reason = NULL;
	unsigned nerr;
	int r;

	*n = (struct nvme_info){ .origin = xstrdup(dev) };
	snprintf(n->ctrl, sizeof(n->ctrl), "%s", ctrl);
	/* Read-only: identify and get-log-page only read; the safety rules forbid anything else. */
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		return set_why(why, r, "cannot open '%s': %s; run as root, or use --from-dumps DIR", dev, strerror(-r));
	}
	r = nvme_rc(nvme_identify_ctrl(fd, &id));
	if (r < 0)
		return set_why(why, r,
			       "identify controller on '%s' failed: %s; run as root, or use --from-dumps DIR", dev,
			       strerror(-r));
	if (nvme_parse_id_ctrl(&id, sizeof(id), n, &reason) < 0)
		return set_why(why, -EBADMSG, "identify controller on '%s': %s", dev, reason);

	/* Active namespaces, ascending; a controller without the list (NVMe < 1.1) has namespace 1. */
	memset(&list, 0, sizeof(list));
	if (nvme_rc(nvme_identify_active_ns_list(fd, 0, &list)) < 0) {
		memset(&list, 0, sizeof(list));
		list.ns[0] = htole32(1);
	}
	for (size_t i = 0; i < NVME_ID_NS_LIST_MAX && list.ns[i]; i++) {
		uint32_t nsid = le32toh(list.ns[i]);
		struct nvme_id_ns ns;
		struct nvme_ns_info info;

		if (nvme_rc(nvme_identify_ns(fd, nsid, &ns)) < 0 ||
		    nvme_parse_id_ns(&ns, sizeof(ns), nsid, &info, &reason) < 0)
			continue; /* an inactive or unreadable namespace is not listed */
		n->ns = realloc(n->ns, (n->nns + 1) * sizeof(*n->ns));
		if (!n->ns)
			abort();
		n->ns[n->nns++] = info;
	}

	/* rae=true: retain asynchronous events, so reading leaves the kernel's event state alone. */
	if (nvme_rc(nvme_get_log_smart(fd, NVME_NSID_ALL, true, &smart)) == 0 &&
	    nvme_parse_smart(&smart, sizeof(smart), &n->smart, &reason) == 0)
		n->have_smart = true;

	/* elpe is 0's based: elpe + 1 entries. */
	nerr = (unsigned)id.elpe + 1;
	elog = xcalloc(nerr, sizeof(*elog));
	if (nvme_rc(nvme_get_log_error(fd, nerr, true, elog)) == 0 &&
	    nvme_parse_error_log(elog, nerr * sizeof(*elog), &n->errlog, &reason) == 0)
		n->have_errlog = true;

	n->have_pcie = nvme_read_pcie(ctrl, sysfs_root, &n->pcie) == 0;
	return 0;
}

const struct nvme_ns_info *nvme_find_ns(const struct nvme_info *n, uint32_t nsid)
{
	for (size_t i = 0; i < n->nns; i++)
		if (n->ns[i].nsid == nsid)
			return &n->ns[i];
	return NULL;
}

uint32_t nvme_nsid_of(const char *name)
{
	const char *base, *p;
	unsigned long v;
	char *end;

	if (!name)
		return 0;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (!startswith(base, "nvme"))
		return 0;
	p = base + 4;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p != 'n' || !isdigit((unsigned char)p[1]))
		return 0;
	errno = 0;
	v = strtoul(p + 1, &end, 10);
	if (errno || *end || v == 0 || v > UINT32_MAX)
		return 0;
	return (uint32_t)v;
}

int nvme_temp_c(uint16_t kelvin)
{
	return (int)kelvin - 273;
}

int nvme_data_units_bytes(uint64_t units, uint64_t *bytes)
{
	return u64_mul(units, NVME_DATA_UNIT_BYTES, bytes);
}

uint64_t nvme_hmb_bytes(uint32_t units)
{
	return (uint64_t)units * NVME_HMB_UNIT_BYTES;
}

uint64_t nvme_hmb_mb(uint32_t units)
{
	/* 256 units of 4 KiB make a MiB; round half up so 10239 still reads "40 MB". */
	return ((uint64_t)units + 128) / 256;
}
