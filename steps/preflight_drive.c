/* SPDX-License-Identifier: MIT */
/* preflight's drive part: identity, health and class of the source (and target) NVMe drives. */
#include "steps.h"
#include "schema.h"
#include "bridge.h"
#include "disk.h"
#include "drives.h"
#include "nvme.h"
#include "size.h"
#include "usbnvme.h"

#include <inttypes.h>

/* What preflight knows about one drive (source or target). */
struct side {
	const char *label;          /* "source" / "target" */
	bool nvme;                  /* an NVMe identity was read (device or dumps) */
	struct nvme_info n;
	const char *model;          /* identify mn, sysfs model, or --target-model */
	bool have_class;            /* a model to judge */
	struct drive_class cls;
	enum drive_verdict verdict;
	char *why;                  /* the verdict's reason */
	char *unknown;              /* why there is no identity: "not an NVMe device (loop0)" */
	struct disk_bridge bridge;  /* the USB bridge the disk sits behind (vendor_id NULL: none) */
	enum usbnvme_family family; /* its family when it is one swaptool reads through */
	char *refused;              /* why reading through it failed; NULL when it was not tried or worked */
	uint32_t presented_lba;     /* the disk's LBA size and size as the bridge presents them */
	uint64_t presented_bytes;
	uint32_t judged_nsid;
};

static void side_free(struct side *s)
{
	nvme_info_free(&s->n);
	free(s->why);
	free(s->unknown);
	free(s->refused);
	bridge_free(&s->bridge);
}

static json_object *jstr_or_null(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

static void jset_temp_c(json_object *o, const char *key, uint16_t kelvin)
{
	json_object_object_add(o, key, kelvin ? json_object_new_int(nvme_temp_c(kelvin)) : NULL);
}

static json_object *class_json(const struct side *s)
{
	json_object *o = json_object_new_object();
	const struct drive_entry *e = &s->cls.e;

	jset_str(o, "model", s->model);
	jset_bool(o, "known", s->cls.known);
	jset_str(o, "name", s->cls.known ? e->name : NULL);
	jset_str(o, "verdict", drive_verdict_name(s->verdict));
	jset_str(o, "reason", s->why);
	jset_str(o, "controller", s->cls.known ? e->controller : NULL);
	jset_str(o, "dram", s->cls.known ? e->dram : NULL);
	json_object_object_add(o, "hmb_mb", s->cls.known && e->hmb_mb ? json_object_new_int64((int64_t)e->hmb_mb) : NULL);
	jset_str(o, "nand", s->cls.known ? e->nand : NULL);
	jset_str(o, "note", s->cls.known ? e->note : NULL);
	if (s->cls.profile_line) {
		_cleanup_free_ char *from = xasprintf("profile line %u", s->cls.profile_line);

		jset_str(o, "catalogue", from);
	} else
		jset_str(o, "catalogue", s->cls.known ? "built-in" : NULL);
	return o;
}

static json_object *smart_json(const struct nvme_smart *m)
{
	json_object *o = json_object_new_object();
	uint64_t rd = 0, wr = 0;
	char b[32];
	bool rd_ok = nvme_data_units_bytes(m->data_units_read, &rd) == 0;
	bool wr_ok = nvme_data_units_bytes(m->data_units_written, &wr) == 0;

	/* The raw fields under nvme-cli's JSON names (`nvme smart-log -o json`), so the two compare. */
	jset_u64(o, "critical_warning", m->critical_warning);
	jset_u64(o, "temperature", m->temperature_k);
	jset_u64(o, "avail_spare", m->avail_spare);
	jset_u64(o, "spare_thresh", m->spare_thresh);
	jset_u64(o, "percent_used", m->percent_used);
	jset_u64(o, "data_units_read", m->data_units_read);
	jset_u64(o, "data_units_written", m->data_units_written);
	jset_u64(o, "host_read_commands", m->host_reads);
	jset_u64(o, "host_write_commands", m->host_writes);
	jset_u64(o, "power_cycles", m->power_cycles);
	jset_u64(o, "power_on_hours", m->power_on_hours);
	jset_u64(o, "unsafe_shutdowns", m->unsafe_shutdowns);
	jset_u64(o, "media_errors", m->media_errors);
	jset_u64(o, "num_err_log_entries", m->num_err_log_entries);
	jset_u64(o, "warning_temp_time", m->warning_temp_time);
	jset_u64(o, "critical_comp_time", m->critical_comp_time);
	jset_u64(o, "thm_temp1_trans_count", m->thm_temp1_trans_count);
	jset_u64(o, "thm_temp2_trans_count", m->thm_temp2_trans_count);
	jset_u64(o, "thm_temp1_total_time", m->thm_temp1_total_time);
	jset_u64(o, "thm_temp2_total_time", m->thm_temp2_total_time);
	/* The same in the incident's units. */
	jset_temp_c(o, "temperature_c", m->temperature_k);
	json_object_object_add(o, "data_read_bytes", rd_ok ? json_object_new_uint64(rd) : NULL);
	json_object_object_add(o, "data_written_bytes", wr_ok ? json_object_new_uint64(wr) : NULL);
	jset_str(o, "data_read", rd_ok ? fmt_tb(rd, b) : NULL);
	jset_str(o, "data_written", wr_ok ? fmt_tb(wr, b) : NULL);
	return o;
}

static json_object *identity_json(const struct side *s, const struct disk *src)
{
	const struct nvme_info *n = &s->n;
	json_object *o = json_object_new_object(), *ic, *nss;
	char b[2][32];
	_cleanup_free_ char *vid = NULL;

	if (s->bridge.vendor_id)
		json_object_object_add(o, "bridge", bridge_json(&s->bridge));
	if (!s->nvme) {
		jset_bool(o, "nvme", false);
		jset_str(o, "reason", s->unknown);
		jset_str(o, "model", s->model);
		/* A model from sysfs (identity unreadable) or --target-model is still judged. */
		json_object_object_add(o, "class", s->have_class ? class_json(s) : NULL);
		return o;
	}
	vid = xasprintf("0x%04" PRIx16, n->vid);
	jset_bool(o, "nvme", true);
	jset_str(o, "from", n->from_dumps ? "dumps" : "device");
	jset_str(o, "read_through", n->read_through);
	jset_str(o, "origin", n->origin);
	jset_str(o, "controller", n->ctrl[0] ? n->ctrl : NULL);
	jset_str(o, "model", n->mn);
	jset_str(o, "firmware", n->fr);
	json_object_object_add(o, "serial", jstr_or_null(n->sn));
	jset_str(o, "vid", vid);

	/* identify-controller fields under nvme-cli's names (`nvme id-ctrl -o json`). */
	ic = json_object_new_object();
	jset_u64(ic, "vid", n->vid);
	jset_u64(ic, "ssvid", n->ssvid);
	jset_str(ic, "sn", n->sn);
	jset_str(ic, "mn", n->mn);
	jset_str(ic, "fr", n->fr);
	jset_u64(ic, "tnvmcap", n->tnvmcap);
	jset_u64(ic, "hmpre", n->hmpre);
	jset_u64(ic, "hmmin", n->hmmin);
	jset_u64(ic, "npss", n->npss);
	jset_u64(ic, "apsta", n->apsta);
	jset_u64(ic, "wctemp", n->wctemp);
	jset_u64(ic, "cctemp", n->cctemp);
	json_object_object_add(o, "id_ctrl", ic);

	jset_u64(o, "hmb_bytes", nvme_hmb_bytes(n->hmpre));
	jset_u64(o, "hmb_mb", nvme_hmb_mb(n->hmpre));
	jset_u64(o, "hmb_min_bytes", nvme_hmb_bytes(n->hmmin));
	jset_u64(o, "power_states", (uint64_t)n->npss + 1);
	jset_bool(o, "apst", n->apsta & 1);
	jset_temp_c(o, "wctemp_c", n->wctemp);
	jset_temp_c(o, "cctemp_c", n->cctemp);
	jset_u64(o, "tnvmcap_bytes", n->tnvmcap);

	nss = json_object_new_array();
	for (size_t i = 0; i < n->nns; i++) {
		const struct nvme_ns_info *ns = &n->ns[i];
		json_object *j = json_object_new_object();

		jset_u64(j, "nsid", ns->nsid);
		jset_u64(j, "nsze", ns->nsze);
		jset_u64(j, "ncap", ns->ncap);
		jset_u64(j, "nuse", ns->nuse);
		jset_u64(j, "lba_format", ns->lba_format);
		jset_u64(j, "lba_size", ns->lba_size);
		jset_u64(j, "metadata_size", ns->metadata_size);
		jset_u64(j, "size_bytes", ns->size_bytes);
		jset_bool(j, "judged", ns->nsid == s->judged_nsid);
		json_object_array_add(nss, j);
	}
	json_object_object_add(o, "namespaces", nss);
	json_object_object_add(o, "judged_nsid", s->judged_nsid ? json_object_new_int64(s->judged_nsid) : NULL);
	{
		const struct nvme_ns_info *ns = nvme_find_ns(n, s->judged_nsid);
		_cleanup_free_ char *note = NULL;

		/* A namespace smaller than the drive (tnvmcap > 0 says how big the drive is) wastes capacity
		 * a clone could use, or hides a second namespace the plan must know about. */
		if (ns && n->tnvmcap && ns->size_bytes < n->tnvmcap)
			note = xasprintf("namespace %" PRIu32 " is %s of the drive's %s (tnvmcap)", ns->nsid,
					 fmt_tb(ns->size_bytes, b[0]), fmt_tb(n->tnvmcap, b[1]));
		jset_str(o, "namespace_note", note);
		if (ns && n->from_dumps && src)
			jset_bool(o, "dumps_match_source", ns->size_bytes == src->size_bytes);
	}
	if (n->have_pcie) {
		json_object *p = json_object_new_object();

		jset_str(p, "current_speed", n->pcie.current_speed);
		jset_u64(p, "current_width", n->pcie.current_width);
		jset_str(p, "max_speed", n->pcie.max_speed);
		jset_u64(p, "max_width", n->pcie.max_width);
		json_object_object_add(o, "pcie", p);
	} else
		json_object_object_add(o, "pcie", NULL);
	json_object_object_add(o, "smart", n->have_smart ? smart_json(&n->smart) : NULL);
	if (n->have_errlog) {
		json_object *e = json_object_new_object();

		jset_u64(e, "slots", n->errlog.slots);
		jset_u64(e, "entries", n->errlog.entries);
		jset_u64(e, "benign_invalid_field", n->errlog.benign);
		jset_u64(e, "other", n->errlog.other);
		json_object_object_add(e, "newest_other_status",
				       n->errlog.other ? json_object_new_int(n->errlog.first_other_status) : NULL);
		json_object_object_add(o, "error_log", e);
	} else
		json_object_object_add(o, "error_log", NULL);
	json_object_object_add(o, "class", class_json(s));
	return o;
}

static void judge(const struct ctx *ctx, struct side *s)
{
	if (!s->model || !*s->model)
		return;
	s->have_class = true;
	drive_lookup(ctx->profile, s->model, &s->cls);
	s->verdict = drive_judge(&s->cls, s->nvme, s->n.hmpre, &s->why);
}

/* A disk on USB: the drive as read through its bridge (taken from th), else why not. */
static void read_bridged(const struct ctx *ctx, struct side *s, const struct disk *d, struct usbnvme_through *th)
{
	_cleanup_free_ char *b = NULL;

	s->bridge = th->bridge;
	th->bridge = (struct disk_bridge){ 0 };
	s->family = th->family;
	s->presented_lba = d->lba_size;
	s->presented_bytes = d->size_bytes;
	if (usbnvme_through_read(th)) {
		s->n = th->n;
		th->n = (struct nvme_info){ 0 };
		s->nvme = true;
		s->model = s->n.mn;
		s->judged_nsid = s->n.ns[0].nsid;
		judge(ctx, s);
		return;
	}
	if (th->family != USBNVME_NONE && th->why)
		s->refused = xstrdup(th->why);
	b = bridge_describe(&s->bridge);
	/* the NVMe commands stay in the enclosure: the SCSI strings are often the bridge's own */
	s->unknown = xasprintf("behind USB bridge %s (%s): the drive's NVMe identity and health were not read%s%s", b,
			       d->sysname, s->refused ? ": " : "", s->refused ?: "");
}

/* Read the drive behind an opened disk: libnvme when it is NVMe, through its USB bridge where the
 * bridge allows it, else say what it is. */
static void read_disk(const struct ctx *ctx, struct side *s, const struct disk *d, struct usbnvme_through *th)
{
	_cleanup_free_ char *why = NULL;

	if (!d->ctrl) {
		s->model = d->model;
		if (th && th->bridge.vendor_id) {
			read_bridged(ctx, s, d, th);
			return;
		}
		s->unknown = xasprintf("not an NVMe device (%s)", d->sysname ? d->sysname : "image file");
		return;
	}
	if (nvme_read_device(d->ctrl, NULL, &s->n, &why) < 0) {
		/* Unreadable identity is not an error: preflight's size checks still stand. */
		s->unknown = xasprintf("NVMe identity of '%s' unreadable: %s", d->ctrl, why);
		s->model = d->model;
		nvme_info_free(&s->n);
		judge(ctx, s);
		return;
	}
	s->nvme = true;
	s->model = s->n.mn;
	s->judged_nsid = nvme_nsid_of(d->dev);
	judge(ctx, s);
}

static enum status verdict_status(enum drive_verdict v)
{
	return v == DRIVE_AVOID || v == DRIVE_MEASURE ? ST_WARN : ST_PASS;
}

static void class_check(struct record *rec, struct side *src, struct side *tgt)
{
	struct side *sides[2] = { src, tgt };
	enum status st = ST_PASS;
	char *summary = NULL;
	json_object *c;
	bool any = false;

	for (unsigned i = 0; i < 2; i++) {
		struct side *s = sides[i];
		char *part;

		if (!s || !s->have_class)
			continue;
		any = true;
		if (verdict_status(s->verdict) > st)
			st = verdict_status(s->verdict);
		/* "source 'XG7000-2TB 2242' (KingSpec XG7000): avoid, DRAM-less with ..." */
		part = xasprintf("%s%s%s '%s'%s%s%s: %s, %s%s%s", summary ? summary : "", summary ? "; " : "", s->label,
				 s->model, s->cls.known ? " (" : "", s->cls.known ? s->cls.e.name : "",
				 s->cls.known ? ")" : "", drive_verdict_name(s->verdict), s->why,
				 s->cls.known && s->cls.e.note ? "; " : "", s->cls.known && s->cls.e.note ? s->cls.e.note : "");
		free(summary);
		summary = part;
	}
	if (!any) {
		c = record_check(rec, SCHEMA_CHECK_DRIVE_CLASS, ST_SKIP, "%s", src->unknown ? src->unknown : "no drive identity");
		return;
	}
	c = record_check(rec, SCHEMA_CHECK_DRIVE_CLASS, st, "%s", summary);
	free(summary);
	json_object_object_add(c, "source", src->have_class ? class_json(src) : NULL);
	json_object_object_add(c, "target", tgt && tgt->have_class ? class_json(tgt) : NULL);
}

/* Health findings of one drive: the worst status and a sentence. */
static enum status health_of(const struct side *s, char **text)
{
	const struct nvme_smart *m = &s->n.smart;
	const struct nvme_errlog *e = &s->n.errlog;
	enum status st = ST_PASS;
	char *t = xstrdup("");
	char b[2][32];
	uint64_t rd = 0, wr = 0;

#define ADD(level, ...)                                                                \
	do {                                                                           \
		char *_p = xasprintf(__VA_ARGS__);                                     \
		char *_n = xasprintf("%s%s%s", t, *t ? ", " : "", _p);                 \
		free(_p);                                                              \
		free(t);                                                               \
		t = _n;                                                                \
		if ((level) > st)                                                      \
			st = (level);                                                  \
	} while (0)

	if (m->critical_warning)
		ADD(ST_FAIL, "critical warning 0x%02x%s%s%s%s%s", m->critical_warning,
		    m->critical_warning & 0x01 ? " (spare below threshold)" : "",
		    m->critical_warning & 0x02 ? " (temperature)" : "",
		    m->critical_warning & 0x04 ? " (reliability degraded)" : "",
		    m->critical_warning & 0x08 ? " (read-only)" : "",
		    m->critical_warning & 0x10 ? " (volatile backup failed)" : "");
	if (m->media_errors)
		ADD(ST_FAIL, "%" PRIu64 " media errors", m->media_errors);
	if (s->n.wctemp && m->temperature_k >= s->n.wctemp)
		ADD(ST_WARN, "%d °C, at or above the warning threshold of %d °C", nvme_temp_c(m->temperature_k),
		    nvme_temp_c(s->n.wctemp));
	if (m->thm_temp1_trans_count || m->thm_temp2_trans_count)
		ADD(ST_WARN, "thermal throttling: %" PRIu32 " T1 and %" PRIu32 " T2 transitions (%" PRIu32
			     " s and %" PRIu32 " s)",
		    m->thm_temp1_trans_count, m->thm_temp2_trans_count, m->thm_temp1_total_time,
		    m->thm_temp2_total_time);
	if (m->warning_temp_time || m->critical_comp_time)
		ADD(ST_WARN, "%" PRIu32 " min above the warning and %" PRIu32 " min above the critical temperature",
		    m->warning_temp_time, m->critical_comp_time);
	if (m->percent_used >= 100)
		ADD(ST_WARN, "%u %% of its rated endurance used", m->percent_used);
	if (s->n.have_errlog && e->other)
		ADD(ST_WARN, "%u error-log entries that are not 'Invalid Field in Command' (newest status 0x%03x)",
		    e->other, e->first_other_status);
	if (st == ST_PASS) {
		free(t);
		nvme_data_units_bytes(m->data_units_read, &rd);
		nvme_data_units_bytes(m->data_units_written, &wr);
		/* The incident's line: "96 h powered, 54.9 TB read / 13.4 TB written, media_errors 0 ..." */
		t = xasprintf("%" PRIu64 " h powered, %s read / %s written, %" PRIu64 " media errors, %u error-log "
			      "entries%s, %d °C",
			      m->power_on_hours, fmt_tb(rd, b[0]), fmt_tb(wr, b[1]), m->media_errors,
			      s->n.have_errlog ? e->other : 0,
			      s->n.have_errlog && e->benign ? " (plus benign 'Invalid Field in Command')" : "",
			      nvme_temp_c(m->temperature_k));
	}
#undef ADD
	*text = t;
	return st;
}

static json_object *health_fields(const struct side *s, enum status st)
{
	json_object *o = json_object_new_object();
	const struct nvme_smart *m = &s->n.smart;

	jset_str(o, "status", status_name(st));
	jset_u64(o, "critical_warning", m->critical_warning);
	jset_u64(o, "media_errors", m->media_errors);
	jset_temp_c(o, "temperature_c", m->temperature_k);
	jset_temp_c(o, "wctemp_c", s->n.wctemp);
	jset_u64(o, "thermal_transitions", (uint64_t)m->thm_temp1_trans_count + m->thm_temp2_trans_count);
	jset_u64(o, "power_on_hours", m->power_on_hours);
	json_object_object_add(o, "error_log_entries", s->n.have_errlog ? json_object_new_int64(s->n.errlog.entries) : NULL);
	json_object_object_add(o, "error_log_benign", s->n.have_errlog ? json_object_new_int64(s->n.errlog.benign) : NULL);
	json_object_object_add(o, "error_log_other", s->n.have_errlog ? json_object_new_int64(s->n.errlog.other) : NULL);
	return o;
}

static void health_check(struct record *rec, struct side *src, struct side *tgt)
{
	struct side *sides[2] = { src, tgt };
	json_object *fields[2] = { NULL, NULL };
	enum status st = ST_PASS;
	char *summary = NULL;
	json_object *c;

	for (unsigned i = 0; i < 2; i++) {
		struct side *s = sides[i];
		_cleanup_free_ char *text = NULL;
		enum status one;
		char *n;

		if (!s || !s->nvme || !s->n.have_smart)
			continue;
		one = health_of(s, &text);
		if (one > st)
			st = one;
		n = xasprintf("%s%s%s%s: %s", summary ? summary : "", summary ? "; " : "", s->label,
			      one == ST_PASS ? " healthy" : "", text);
		free(summary);
		summary = n;
		fields[i] = health_fields(s, one);
	}
	if (!summary) {
		const char *why = src->unknown ? src->unknown
				  : !src->nvme	     ? "no drive identity"
				  : src->n.from_dumps ? "no SMART/health log: smart-log.bin is not among the dumps"
						      : "the SMART/health log could not be read";
		record_check(rec, "health", ST_SKIP, "%s", why);
		return;
	}
	c = record_check(rec, "health", st, "%s", summary);
	free(summary);
	json_object_object_add(c, "source", fields[0]);
	json_object_object_add(c, "target", fields[1]);
}

/* What one drive's USB bridge let through: a sentence and its status. Read through it: judged as in
 * the slot, a warning when its namespace's LBA size or size is not what the bridge presents. Not read:
 * today's warning, and why reading through it failed when it was tried. */
static enum status bridge_side(const struct side *s, bool target, const char *target_model, char **text)
{
	_cleanup_free_ char *b = bridge_describe(&s->bridge), *how = NULL;
	const struct nvme_ns_info *ns = s->nvme ? nvme_find_ns(&s->n, s->judged_nsid) : NULL;
	char n[2][32];

	if (!s->nvme) {
		*text = xasprintf("%s behind USB bridge %s: its identity, class and health were not read%s%s%s", s->label, b,
				  !target      ? "; judge the old drive in the slot (or from its nvme-cli dumps, --from-dumps)"
				  : target_model ? " (class judged from --target-model); judge it in the slot after the swap"
						 : "; judge it in the slot after the swap, or name it with --target-model",
				  s->refused ? "; reading it through the bridge failed: " : "", s->refused ?: "");
		return ST_WARN;
	}
	how = xasprintf("%s behind USB bridge %s, read through it (%s)", s->label, b, usbnvme_family_chips(s->family));
	if (ns && ns->lba_size != s->presented_lba) {
		*text = xasprintf("%s: its namespace is formatted with %u-byte LBAs and the bridge presents %u-byte ones, so "
				  "in the slot it presents %u-byte LBAs; %s",
				  how, ns->lba_size, s->presented_lba, ns->lba_size,
				  target ? "path 2 is refused (lba-format)"
					 : "its partition table was read in the bridge's units: run preflight with the drive in the slot");
		return ST_WARN;
	}
	if (ns && ns->size_bytes != s->presented_bytes) {
		*text = xasprintf("%s: its namespace holds %s B and the bridge presents %s B; the sizes here are the bridge's, "
				  "check them in the slot",
				  how, fmt_thousands(ns->size_bytes, n[0]), fmt_thousands(s->presented_bytes, n[1]));
		return ST_WARN;
	}
	*text = xasprintf("%s: identity, class, host memory buffer, LBA format and SMART judged as in the slot", how);
	return ST_PASS;
}

/* usb-bridge: what each drive's bridge let through (src/usbnvme.h), or no check at all when neither
 * drive is on USB. */
static void bridge_check(struct record *rec, const struct side *src, const struct side *tgt, const char *target_model)
{
	const struct side *sides[2] = { src, tgt };
	_cleanup_free_ char *summary = NULL;
	enum status st = ST_PASS;

	for (unsigned i = 0; i < 2; i++) {
		const struct side *s = sides[i];
		_cleanup_free_ char *one = NULL;
		enum status k;
		char *n;

		if (!s || !s->bridge.vendor_id)
			continue;
		k = bridge_side(s, i == 1, target_model, &one);
		if (k > st)
			st = k;
		n = xasprintf("%s%s%s", summary ?: "", summary ? "; " : "", one);
		free(summary);
		summary = n;
	}
	if (summary)
		record_check(rec, "usb-bridge", st, "%s", summary);
}

int preflight_drive(struct ctx *ctx, struct record *rec, json_object *src_json, const struct disk *src,
		    const char *from_dumps, const struct disk *target_disk, const char *target_model,
		    uint64_t target_lba_count, struct usbnvme_through *src_through, struct usbnvme_through *tgt_through)
{
	struct side s = { .label = "source" }, t = { .label = "target" };
	bool have_target;
	int code = 0;

	if (from_dumps) {
		_cleanup_free_ char *why = NULL;

		if (nvme_load_dumps(from_dumps, &s.n, &why) < 0) {
			code = ctx_error(ctx, EXIT_FAILED, "%s", why);
			goto out;
		}
		s.nvme = true;
		s.model = s.n.mn;
		s.judged_nsid = s.n.nns ? s.n.ns[0].nsid : 0;
		judge(ctx, &s);
	} else if (src)
		read_disk(ctx, &s, src, src_through);
	else
		s.unknown = xstrdup("no source");

	have_target = target_disk || target_model;
	if (target_disk)
		read_disk(ctx, &t, target_disk, tgt_through);
	if (target_model) {
		struct drive_class mc;
		const struct drive_sku *sku;
		json_object *tj = jget(rec->root, "target");
		uint64_t lba_size = tj && jget_u64(tj, "lba_size") ? jget_u64(tj, "lba_size") : 512;
		uint64_t want = 0, have = 0;
		char b[3][32];

		drive_lookup(ctx->profile, target_model, &mc);
		/* A device's own model and --target-model must name the same catalogue entry. A model the
		 * catalogue does not know is not compared: "990 PRO" and "Samsung SSD 990 PRO 2TB" are one
		 * drive, and only the catalogue knows which spellings belong together. */
		if (t.model && *t.model && mc.known && (t.nvme || !t.bridge.vendor_id)) {
			struct drive_class dc;

			drive_lookup(ctx->profile, t.model, &dc);
			if (!dc.known || !streq(mc.e.name, dc.e.name)) {
				code = ctx_error(ctx, EXIT_USAGE,
						 "--target-model '%s' disagrees with --target '%s', which reports '%s'; "
						 "drop --target-model or name the drive that is attached",
						 target_model, target_disk->path, t.model);
				goto out;
			}
		}
		sku = drive_sku_for(&mc, target_model);
		if (sku && target_lba_count && !u64_mul(sku->lba_count, sku->lba_size, &want) &&
		    !u64_mul(target_lba_count, lba_size, &have) && want != have) {
			code = ctx_error(ctx, EXIT_USAGE,
					 "--target-model '%s' is %s bytes (%s LBAs of %" PRIu32 " B), but --target is %s "
					 "bytes; check the size or the model",
					 target_model, fmt_thousands(want, b[0]), fmt_thousands(sku->lba_count, b[1]),
					 sku->lba_size, fmt_thousands(have, b[2]));
			goto out;
		}
		if (!t.nvme) {
			t.model = target_model;
			free(t.unknown);
			t.unknown = NULL;
			free(t.why);
			t.why = NULL;
			judge(ctx, &t);
		}
	}

	/* The record: identities, then the two checks. */
	json_object_object_add(rec->root, "source_identity", identity_json(&s, src));
	if (have_target) {
		json_object *tid = identity_json(&t, NULL);

		if (!t.nvme && target_model) {
			_cleanup_free_ char *b = t.bridge.vendor_id ? bridge_describe(&t.bridge) : NULL;
			_cleanup_free_ char *why = b ? xasprintf("behind USB bridge %s: judged from --target-model", b) : NULL;

			jset_str(tid, "from", "model");
			jset_str(tid, "reason", why ?: "not attached: judged from --target-model");
		}
		json_object_object_add(rec->root, "target_identity", tid);
	} else
		json_object_object_add(rec->root, "target_identity", NULL);
	if (s.nvme && src_json) {
		jset_str(src_json, "model", s.n.mn);
		jset_str(src_json, "firmware", s.n.fr);
		json_object_object_add(src_json, "serial", jstr_or_null(s.n.sn));
		jset_str(src_json, "vid", jget_str(jget(rec->root, "source_identity"), "vid"));
	}
	class_check(rec, &s, have_target ? &t : NULL);
	health_check(rec, &s, have_target ? &t : NULL);
	bridge_check(rec, &s, have_target ? &t : NULL, target_model);
out:
	side_free(&s);
	side_free(&t);
	return code;
}

/* ---- rendering for people ---- */

static const char *cell(json_object *o, const char *key)
{
	const char *v = jget_str(o, key);

	return v && *v ? v : NULL;
}

static void row(struct table *t, bool two, const char *what, const char *a, const char *b)
{
	if (!a && !b)
		return;
	if (two)
		table_row(t, what, a, b);
	else
		table_row(t, what, a);
}

void preflight_drive_render(const struct ctx *ctx, json_object *record)
{
	json_object *id[2] = { jget(record, "source_identity"), jget(record, "target_identity") };
	bool two = id[1] != NULL;
	_cleanup_table_ struct table *t = NULL;
	char buf[2][12][96];

	if (!id[0] && !id[1])
		return;
	out_heading(ctx, "drive");
	t = table_new(two ? 3 : 2);
	if (two)
		table_header(t, "", "source", "target");
	else
		table_header(t, "", "source");
	for (unsigned i = 0; i < 2; i++) {
		json_object *o = id[i], *cls = jget(o, "class"), *sm = jget(o, "smart"), *el = jget(o, "error_log");
		json_object *p = jget(o, "pcie"), *nss = jget(o, "namespaces");
		char tmp[2][32];

		for (unsigned k = 0; k < 12; k++)
			buf[i][k][0] = '\0';
		if (!o)
			continue;
		if (!jget_bool(o, "nvme") && !cls)
			snprintf(buf[i][0], 96, "%s", jget_str(o, "reason") ? jget_str(o, "reason") : "-");
		else
			snprintf(buf[i][0], 96, "%s", jget_str(o, "model") ? jget_str(o, "model") : "-");
		if (jget_bool(o, "nvme")) {
			snprintf(buf[i][1], 96, "%s (vid %s)", jget_str(o, "firmware"), jget_str(o, "vid"));
			snprintf(buf[i][2], 96, "%s", cell(o, "serial") ? cell(o, "serial") : "-");
			snprintf(buf[i][4], 96, "%" PRIu64 " MB (hmpre %" PRIu64 ")", jget_u64(o, "hmb_mb"),
				 jget_u64(jget(o, "id_ctrl"), "hmpre"));
			snprintf(buf[i][5], 96, "%" PRIu64 "%s", jget_u64(o, "power_states"),
				 jget_bool(o, "apst") ? ", APST" : "");
			if (p)
				snprintf(buf[i][6], 96, "%s x%" PRIu64 " (max %s x%" PRIu64 ")", jget_str(p, "current_speed"),
					 jget_u64(p, "current_width"), jget_str(p, "max_speed"), jget_u64(p, "max_width"));
			for (size_t k = 0; nss && k < json_object_array_length(nss); k++) {
				json_object *ns = json_object_array_get_idx(nss, k);
				size_t l = strlen(buf[i][7]);

				snprintf(buf[i][7] + l, 96 - l, "%s%" PRIu64 ": %s LBAs x %" PRIu64 " B%s", l ? ", " : "",
					 jget_u64(ns, "nsid"), fmt_thousands(jget_u64(ns, "nsze"), tmp[0]),
					 jget_u64(ns, "lba_size"), jget_bool(ns, "judged") ? " (judged)" : "");
			}
			if (sm) {
				snprintf(buf[i][8], 96, "%" PRIu64 " h, %s read / %s written", jget_u64(sm, "power_on_hours"),
					 jget_str(sm, "data_read") ? jget_str(sm, "data_read") : "-",
					 jget_str(sm, "data_written") ? jget_str(sm, "data_written") : "-");
				snprintf(buf[i][9], 96, "%" PRIi64 " °C (warning at %" PRIi64 " °C), %" PRIu64 " media errors",
					 jget_i64(sm, "temperature_c"), jget_i64(o, "wctemp_c"), jget_u64(sm, "media_errors"));
			}
			if (el)
				snprintf(buf[i][10], 96, "%" PRIu64 " entries (%" PRIu64 " benign)", jget_u64(el, "entries"),
					 jget_u64(el, "benign_invalid_field"));
		}
		if (jget(o, "bridge")) {
			json_object *br = jget(o, "bridge");
			const char *rt = jget_str(o, "read_through");

			snprintf(buf[i][11], 96, "%s:%s%s%s, %s%s", jget_str(br, "vendor_id") ?: "?", jget_str(br, "product_id") ?: "?",
				 jget_str(br, "product") ? " " : "", jget_str(br, "product") ?: "",
				 rt ? "read through: " : "not read through", rt ?: "");
		}
		if (cls)
			snprintf(buf[i][3], 96, "%s: %s", jget_str(cls, "name") ? jget_str(cls, "name") : "not in the catalogue",
				 jget_str(cls, "verdict"));
		(void)tmp[1];
	}
#define C(i, k) (buf[i][k][0] ? buf[i][k] : NULL)
	row(t, two, "model", C(0, 0), C(1, 0));
	row(t, two, "firmware", C(0, 1), C(1, 1));
	row(t, two, "serial", C(0, 2), C(1, 2));
	row(t, two, "USB bridge", C(0, 11), C(1, 11));
	row(t, two, "class", C(0, 3), C(1, 3));
	row(t, two, "host memory buffer", C(0, 4), C(1, 4));
	row(t, two, "power states", C(0, 5), C(1, 5));
	row(t, two, "PCIe link", C(0, 6), C(1, 6));
	row(t, two, "namespaces", C(0, 7), C(1, 7));
	row(t, two, "use", C(0, 8), C(1, 8));
	row(t, two, "temperature", C(0, 9), C(1, 9));
	row(t, two, "error log", C(0, 10), C(1, 10));
#undef C
	table_print(ctx, t);
	if (jget_str(id[0], "namespace_note"))
		out_line(ctx, "  %s", jget_str(id[0], "namespace_note"));
	if (jget(id[0], "dumps_match_source") && !jget_bool(id[0], "dumps_match_source"))
		out_line(ctx, "  judged from the dumps in '%s', which describe another size than the source",
			 jget_str(id[0], "origin"));
}
