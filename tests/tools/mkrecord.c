/* SPDX-License-Identifier: MIT */
/* mkrecord: the test fixtures of tests/tools/records.c as files, and a check of record files
 * against src/schema.h.
 *   mkrecord set DIR          the passing dgx4 swap: DIR/{preflight,backup,restore,verify,accept}.json
 *   mkrecord NAME FILE        one fixture (mkrecord list names them)
 *   mkrecord steps            the steps whose records others read (src/schema.h), one a line
 *   mkrecord check FILE...    each file parsed as a record (envelope and declared keys); exit 1 on
 *                             the first that is not, saying why */
#include "util.h"
#include "records.h"
#include "schema.h"

static int write_record(json_object *o, const char *path)
{
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	_cleanup_free_ char *withnl = xasprintf("%s\n", text);

	return write_file_atomic(path, withnl, strlen(withnl), 0644);
}

static int check(int n, char **files)
{
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *text = NULL, *why = NULL;
		json_object *o = NULL;
		size_t len = 0;
		int r = read_input(files[i], RECORD_MAX_BYTES, 0, &text, &len, &why);

		if (r == 0)
			r = record_parse(text, len, NULL, &o, &why);
		json_object_put(o);
		if (r < 0) {
			fprintf(stderr, "mkrecord: '%s' is not a record this swaptool reads: %s\n", files[i], why);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const set[] = { "preflight", "backup", "restore", "verify", "accept" };
	int r;

	if (argc >= 2 && streq(argv[1], "check"))
		return check(argc - 2, argv + 2);
	if (argc == 2 && streq(argv[1], "steps")) {
		for (size_t i = 0; i < SS_N; i++)
			puts(schema_steps[i]);
		return 0;
	}
	if (argc == 2 && streq(argv[1], "list")) {
		for (size_t i = 0; i < fixture_names_n; i++)
			puts(fixture_names[i]);
		return 0;
	}
	if (argc == 3 && streq(argv[1], "set")) {
		r = mkdir_p(argv[2], 0755);
		for (size_t i = 0; r == 0 && i < ARRAY_SIZE(set); i++) {
			_cleanup_free_ char *path = xasprintf("%s/%s.json", argv[2], set[i]);
			json_object *o = fixture_record(set[i]);

			r = write_record(o, path);
			json_object_put(o);
		}
	} else if (argc == 3) {
		json_object *o = fixture_record(argv[1]);

		if (!o) {
			fprintf(stderr, "mkrecord: no fixture '%s'; 'mkrecord list' names them\n", argv[1]);
			return 2;
		}
		r = write_record(o, argv[2]);
		json_object_put(o);
	} else {
		fprintf(stderr, "usage: mkrecord set DIR | mkrecord NAME FILE | mkrecord list | mkrecord steps | mkrecord check FILE...\n");
		return 2;
	}
	if (r < 0) {
		fprintf(stderr, "mkrecord: cannot write: %s\n", strerror(-r));
		return 3;
	}
	return 0;
}
