/* SPDX-License-Identifier: MIT */
/* manifest_parse (src/manifest.c): a good manifest read whole, and each refusal with its reason. */
#include "util.h"
#include "manifest.h"
#include "tap.h"

#define SHA "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
#define FILE_E "{\"path\":\"etc/fstab\",\"type\":\"file\",\"mode\":\"0644\",\"uid\":0,\"gid\":0,\"user\":\"root\"," \
	       "\"group\":\"root\",\"size\":4,\"sha256\":\"" SHA "\",\"mtime\":1700000000}"
#define DIR_E "{\"path\":\"home/nv\",\"type\":\"dir\",\"mode\":\"0755\",\"uid\":1000,\"gid\":1000,\"user\":\"nv\"," \
	      "\"group\":\"nv\",\"size\":0,\"parent\":true}"
#define LINK_E "{\"path\":\"home/nv/l\",\"type\":\"symlink\",\"mode\":\"0777\",\"uid\":1000,\"gid\":1000," \
	       "\"user\":\"nv\",\"group\":\"nv\",\"size\":0,\"link\":\"../x\"}"

/* manifest_parse of `entries` (and `rest`, more keys) in a manifest of the right schema; *why kept */
static int parse(const char *entries, const char *rest, struct manifest *m, char **why)
{
	_cleanup_free_ char *text = xasprintf("{\"schema\":\"" MANIFEST_SCHEMA "\",\"host\":\"dgx4\",\"user\":\"nv\","
					      "\"entries\":[%s]%s%s}", entries, rest ? "," : "", rest ? rest : "");

	manifest_free(m);
	free(*why);
	*why = NULL;
	return manifest_parse(text, strlen(text), m, why);
}

static void good(void)
{
	struct manifest m = { 0 };
	_cleanup_free_ char *why = NULL;
	const struct mentry *e;

	CHECK(parse(FILE_E "," DIR_E "," LINK_E,
		    "\"state\":[{\"name\":\"preflight.json\",\"size\":12,\"sha256\":\"" SHA "\"}],"
		    "\"undo\":{\"created\":[\"home/nv/new\"]}", &m, &why) == 0);
	CHECK(why == NULL);
	CHECK_STR(m.host, "dgx4");
	CHECK_STR(m.user, "nv");
	CHECK(m.home == NULL);
	CHECK_U64(m.n, 3);
	e = manifest_find(&m, "etc/fstab");
	CHECK(e && e->type == MT_FILE && e->mode == 0644 && e->size == 4 && streq(e->sha256, SHA));
	CHECK(e && e->mtime == 1700000000 && streq(e->user, "root") && !e->parent && !e->link);
	e = manifest_find(&m, "home/nv");
	CHECK(e && e->type == MT_DIR && e->uid == 1000 && e->parent && e->sha256[0] == '\0');
	e = manifest_find(&m, "home/nv/l");
	CHECK(e && e->type == MT_SYMLINK && streq(e->link, "../x"));
	CHECK(manifest_find(&m, "home") == NULL);
	CHECK_U64(m.nst, 1);
	CHECK(m.nst == 1 && streq(m.st[0].name, "preflight.json") && m.st[0].size == 12);
	CHECK(m.undo);
	CHECK(m.undo_created.n == 1 && streq(m.undo_created.v[0], "home/nv/new"));
	/* white space after the document, and NUL bytes among it, as the manifest always allowed */
	{
		static const char text[] = "{\"schema\":\"" MANIFEST_SCHEMA "\",\"entries\":[]}\n\0 \0";

		manifest_free(&m);
		CHECK(manifest_parse(text, sizeof(text) - 1, &m, &why) == 0);
		CHECK_U64(m.n, 0);
		CHECK(!m.undo);
	}
	/* what manifest_to_json writes reads back the same */
	{
		struct manifest back = { 0 };
		json_object *o;
		const char *text;

		manifest_free(&m);
		CHECK(parse(FILE_E "," LINK_E, NULL, &m, &why) == 0);
		o = manifest_to_json(&m);
		text = json_object_to_json_string(o);
		CHECK(manifest_parse(text, strlen(text), &back, &why) == 0);
		CHECK(back.n == 2 && streq(back.e[1].link, "../x"));
		json_object_put(o);
		manifest_free(&back);
	}
	manifest_free(&m);
}

static void whole_refused(void)
{
	static const struct { const char *text, *why; } bad[] = {
		{ "{", "the manifest is not valid JSON" },
		{ "null", "the manifest is not valid JSON" },
		{ "{\"schema\":\"" MANIFEST_SCHEMA "\",\"entries\":[]} {}", "the manifest is not valid JSON" },
		{ "{\"schema\":\"" MANIFEST_SCHEMA "\",\"entries\":[]}\0x", "the manifest is not valid JSON" },
		{ "[]", "the manifest's schema is not '" MANIFEST_SCHEMA "'" },
		{ "{\"schema\":\"swaptool-manifest/2\",\"entries\":[]}", "the manifest's schema is not '" MANIFEST_SCHEMA "'" },
		{ "{\"schema\":\"" MANIFEST_SCHEMA "\"}", "the manifest has no 'entries' array" },
		{ "{\"schema\":\"" MANIFEST_SCHEMA "\",\"entries\":{}}", "the manifest has no 'entries' array" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct manifest m = { 0 };
		_cleanup_free_ char *why = NULL;
		/* the fourth holds a NUL: its length is that of the whole literal, not strlen */
		size_t len = i == 3 ? strlen(bad[i].text) + 2 : strlen(bad[i].text);

		CHECK(manifest_parse(bad[i].text, len, &m, &why) == -EBADMSG);
		CHECK_STR(why, bad[i].why);
		manifest_free(&m);
	}
}

#define ENTRY(path, type, mode, more) \
	"{\"path\":" path ",\"type\":" type ",\"mode\":" mode ",\"uid\":0,\"gid\":0,\"user\":\"root\",\"group\":\"root\"," \
	"\"size\":0" more "}"

static void entries_refused(void)
{
	static const struct { const char *entries, *rest, *why; } bad[] = {
		{ "{\"type\":\"dir\"}", NULL, "manifest entry 0 '(none)': no path" },
		{ DIR_E ",\"x\"", NULL, "manifest entry 1 '(none)': no path" },
		{ ENTRY("\"/etc\"", "\"dir\"", "\"0755\"", ""), NULL, "manifest entry 0 '/etc': absolute path" },
		{ ENTRY("\"etc/../x\"", "\"dir\"", "\"0755\"", ""), NULL, "manifest entry 0 'etc/../x': '..' component" },
		{ ENTRY("\"" MANIFEST_NAME "\"", "\"file\"", "\"0600\"", ""), NULL,
		  "manifest entry '" MANIFEST_NAME "' uses a name reserved for swaptool" },
		{ ENTRY("\"" STATE_DIR_NAME "/a.json\"", "\"file\"", "\"0600\"", ""), NULL,
		  "manifest entry '" STATE_DIR_NAME "/a.json' uses a name reserved for swaptool" },
		{ ENTRY("\"etc/" RESTORE_TMP_PREFIX "x\"", "\"file\"", "\"0600\"", ""), NULL,
		  "manifest entry 'etc/" RESTORE_TMP_PREFIX "x' uses a name reserved for swaptool" },
		{ ENTRY("\"etc\"", "\"fifo\"", "\"0755\"", ""), NULL, "manifest entry 'etc': unknown type 'fifo'" },
		{ ENTRY("\"etc\"", "1", "\"0755\"", ""), NULL, "manifest entry 'etc': unknown type '(none)'" },
		{ ENTRY("\"etc\"", "\"dir\"", "\"17777\"", ""), NULL, "manifest entry 'etc': bad mode '17777'" },
		{ ENTRY("\"etc\"", "\"dir\"", "\"08\"", ""), NULL, "manifest entry 'etc': bad mode '08'" },
		{ ENTRY("\"etc\"", "\"dir\"", "\"\"", ""), NULL, "manifest entry 'etc': bad mode ''" },
		{ ENTRY("\"etc\"", "\"dir\"", "493", ""), NULL, "manifest entry 'etc': bad mode '(none)'" },
		{ "{\"path\":\"etc\",\"type\":\"dir\",\"mode\":\"0755\",\"uid\":-1,\"gid\":0,\"user\":\"root\","
		  "\"group\":\"root\",\"size\":0}", NULL, "manifest entry 'etc': uid, gid, size, user or group missing" },
		{ "{\"path\":\"etc\",\"type\":\"dir\",\"mode\":\"0755\",\"uid\":0,\"gid\":0,\"user\":\"root\","
		  "\"size\":0}", NULL, "manifest entry 'etc': uid, gid, size, user or group missing" },
		{ ENTRY("\"etc/fstab\"", "\"file\"", "\"0644\"", ",\"sha256\":\"abc\""), NULL,
		  "manifest entry 'etc/fstab': no valid sha256" },
		{ ENTRY("\"etc/l\"", "\"symlink\"", "\"0777\"", ""), NULL, "manifest entry 'etc/l': a symlink without a target" },
		{ ENTRY("\"etc/h\"", "\"hardlink\"", "\"0644\"", ",\"link\":\"\""), NULL,
		  "manifest entry 'etc/h': a hardlink without a target" },
		{ DIR_E "," DIR_E, NULL, "the manifest lists 'home/nv' twice" },
		{ "", "\"state\":[{\"name\":\"../x.json\",\"size\":1,\"sha256\":\"" SHA "\"}]",
		  "manifest state record 0 '../x.json' is malformed" },
		{ "", "\"state\":[{\"name\":\"a.json\",\"size\":-1,\"sha256\":\"" SHA "\"}]",
		  "manifest state record 0 'a.json' is malformed" },
		{ "", "\"state\":[5]", "manifest state record 0 '(none)' is malformed" },
		{ "", "\"undo\":{\"created\":[\"a\",\"../b\"]}", "undo path '../b': '..' component" },
		{ "", "\"undo\":{\"created\":[null]}", "undo path '(none)': not a string" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct manifest m = { 0 };
		_cleanup_free_ char *why = NULL;

		CHECK(parse(bad[i].entries, bad[i].rest, &m, &why) == -EBADMSG);
		CHECK_STR(why, bad[i].why);
		manifest_free(&m);
	}
}

int main(void)
{
	good();
	whole_refused();
	entries_refused();
	return tap_done();
}
