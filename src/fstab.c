/* SPDX-License-Identifier: MIT */
/* fstab/crypttab identifier lines and their resolution on this machine through libblkid. */
#include "util.h"
#include "fstab.h"
#include "json.h"

#include <blkid/blkid.h>
#include <ctype.h>
#include <libmount/libmount.h>
#include <strings.h>

static blkid_cache cache;

void fstab_blkid_reset(void)
{
	if (cache)
		blkid_put_cache(cache);
	cache = NULL;
}

bool fstab_resolve_blkid(const char *tag, const char *value, void *userdata)
{
	(void)userdata;
	/* "/dev/null" as the cache file: never read or write /run/blkid/blkid.tab, which may be
	 * stale after a reinstall (it would name the old drive's UUIDs). */
	if (!cache) {
		if (blkid_get_cache(&cache, "/dev/null") < 0)
			return false;
		blkid_probe_all(cache);
	}
	blkid_dev dev = blkid_find_dev_with_tag(cache, tag, value);
	if (dev && blkid_verify(cache, dev))
		return true;
	/* udev's /dev/disk/by-* links, where udev runs. */
	char *name = blkid_evaluate_tag(tag, value, &cache);
	if (name) {
		free(name);
		return true;
	}
	return false;
}

bool fstab_is_crypttab(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return startswith(base, "crypttab");
}

/* Split a source spec into tag and value: "UUID=x", "UUID=\"x\"", "/dev/disk/by-uuid/x". */
static bool split_tag(const char *src, char **tag, char **value)
{
	static const struct { const char *prefix, *tag; } links[] = {
		{ "/dev/disk/by-uuid/", "UUID" },
		{ "/dev/disk/by-partuuid/", "PARTUUID" },
		{ "/dev/disk/by-label/", "LABEL" },
		{ "/dev/disk/by-partlabel/", "PARTLABEL" },
	};
	static const char *const tags[] = { "UUID", "PARTUUID", "LABEL", "PARTLABEL" };

	for (size_t i = 0; i < ARRAY_SIZE(links); i++)
		if (startswith(src, links[i].prefix) && src[strlen(links[i].prefix)]) {
			*tag = xstrdup(links[i].tag);
			*value = xstrdup(src + strlen(links[i].prefix));
			return true;
		}
	for (size_t i = 0; i < ARRAY_SIZE(tags); i++) {
		size_t n = strlen(tags[i]);

		if (strncasecmp(src, tags[i], n) == 0 && src[n] == '=') {
			const char *v = src + n + 1;
			size_t len = strlen(v);

			if (len >= 2 && (v[0] == '"' || v[0] == '\'') && v[len - 1] == v[0]) {
				v++;
				len -= 2;
			}
			if (len == 0)
				return false;
			*tag = xstrdup(tags[i]);
			*value = strndup(v, len);
			if (!*value)
				abort();
			return true;
		}
	}
	return false;
}

/* True when the comma-separated option string holds NAME as an option of its own (libmount's
 * parser: "nofail" is not found in "x-nofailover", nor in "noauto2"). */
static bool has_option(const char *opts, const char *name)
{
	return opts && mnt_optstr_get_option(opts, name, NULL, NULL) == 0;
}

/* What stops working at boot when this line names a device that is not there. */
static char *what_breaks(bool crypttab, const char *target, const char *fstype, const char *opts)
{
	bool nofail = has_option(opts, "nofail") || has_option(opts, "noauto");

	if (crypttab)
		return xasprintf("the encrypted volume '%s' is not unlocked%s", target,
				 nofail ? " (nofail: boot continues without it)" :
					  "; boot waits 90 s for the device, then drops to the emergency shell");
	if (streq(fstype, "swap"))
		return xasprintf("swap is not enabled%s", nofail ? " (nofail)" : "; boot waits 90 s for the device");
	if (nofail)
		return xasprintf("'%s' is not mounted (nofail: boot continues without it)", target);
	if (streq(target, "/"))
		return xstrdup("the root filesystem is not found: the initramfs waits, then drops to a rescue shell");
	if (streq(target, "/boot/efi") || streq(target, "/boot"))
		return xasprintf("'%s' is not mounted: boot waits 90 s, then the emergency shell; kernel and bootloader updates fail", target);
	return xasprintf("'%s' is not mounted: boot waits 90 s for the device, then drops to the emergency shell", target);
}

/* A line's fields, freed when the loop's iteration ends (cleanup attribute). */
static void fields_free(char *(*f)[4])
{
	for (size_t i = 0; i < ARRAY_SIZE(*f); i++)
		free((*f)[i]);
}

int fstab_check(const char *text, bool crypttab, fstab_resolver resolve, void *userdata, struct fstab_report *rep)
{
	_cleanup_free_ char *copy = xstrdup(text);
	char *save = NULL;
	unsigned lineno = 0;

	*rep = (struct fstab_report){ 0 };
	/* strtok_r would skip empty lines and lose the numbering: walk by hand. */
	for (char *line = copy, *next; line; line = next) {
		__attribute__((cleanup(fields_free))) char *f[4] = { 0 };
		_cleanup_free_ char *work = NULL, *tag = NULL, *value = NULL;
		unsigned nf = 0;
		char *p;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		work = xstrdup(line);
		p = work;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			continue;
		/* fields are written mangled (a space as \\040, as getmntent and libmount read them) */
		for (char *tok = strtok_r(p, " \t", &save); tok && nf < 4; tok = strtok_r(NULL, " \t", &save))
			if (!(f[nf++] = mnt_unmangle(tok)))
				abort();
		const char *src = crypttab ? f[1] : f[0];
		const char *target = crypttab ? f[0] : f[1];
		if (!src || !target)
			continue;
		if (!split_tag(src, &tag, &value))
			continue;
		rep->ids++;
		if (resolve(tag, value, userdata))
			continue;
		rep->v = realloc(rep->v, (rep->n + 1) * sizeof(*rep->v));
		if (!rep->v)
			abort();
		rep->v[rep->n++] = (struct fstab_issue){
			.line = lineno,
			.text = xstrdup(line),
			.tag = TAKE_PTR(tag),
			.value = TAKE_PTR(value),
			.target = xstrdup(target),
			/* options are the fourth field of both: fstab's mount options, crypttab's */
			.breaks = what_breaks(crypttab, target, crypttab ? NULL : f[2], f[3]),
		};
	}
	return 0;
}

json_object *fstab_report_json(const struct fstab_report *rep)
{
	json_object *arr = json_object_new_array();

	for (size_t k = 0; k < rep->n; k++) {
		json_object *o = json_object_new_object();
		jset_u64(o, "line", rep->v[k].line);
		jset_str(o, "text", rep->v[k].text);
		jset_str(o, "tag", rep->v[k].tag);
		jset_str(o, "value", rep->v[k].value);
		jset_str(o, "target", rep->v[k].target);
		jset_str(o, "breaks", rep->v[k].breaks);
		json_object_array_add(arr, o);
	}
	return arr;
}

void fstab_report_free(struct fstab_report *rep)
{
	for (size_t i = 0; i < rep->n; i++) {
		free(rep->v[i].text);
		free(rep->v[i].tag);
		free(rep->v[i].value);
		free(rep->v[i].target);
		free(rep->v[i].breaks);
	}
	free(rep->v);
	*rep = (struct fstab_report){ 0 };
}
