// C face of TagLib's C++ property map: Debian 12's C binding (taglib_c) has no property map, and
// ReplayGain/R128 fields and lyrics are only reachable through it.
#ifndef TONEARM_TAG_FIELDS_H
#define TONEARM_TAG_FIELDS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One value of one tag field (a key with several values comes once per value, in file order).
typedef struct {
    char *key;
    char *value;
} tonearm_tag_field;

/// One line of synchronised lyrics with its start in milliseconds.
typedef struct {
    unsigned int time_ms;
    char *text;
} tonearm_synced_text;

/// Reads every field of the file's tags (all formats TagLib knows). Returns 0, or -1 when the file
/// cannot be opened as a tagged audio file. Free the result with tonearm_tag_fields_free.
int tonearm_tag_fields_read(const char *path, tonearm_tag_field **fields, size_t *count);
void tonearm_tag_fields_free(tonearm_tag_field *fields, size_t count);

/// What the library takes from an audio file, read through one read-only open of it: the basic tags
/// (NULL when the format has no tag), the audio properties (0 when unknown) and every field.
typedef struct {
    char *title;
    char *artist;
    char *album;
    char *genre;
    unsigned int year;
    unsigned int track;
    int sample_rate;
    int length_seconds;
    tonearm_tag_field *fields;
    size_t field_count;
} tonearm_tag_file;

/// Fills `file`. Returns 0, or -1 when the file cannot be opened as an audio file TagLib knows (by its
/// extension, then by its content). Free the result with tonearm_tag_file_free.
int tonearm_tag_file_read(const char *path, tonearm_tag_file *file);
void tonearm_tag_file_free(tonearm_tag_file *file);

/// Sets (or, with an empty value, removes) fields and saves the file. Returns 0, -1 when the file
/// cannot be opened, -2 when saving failed.
int tonearm_tag_fields_write(const char *path, const char *const *keys, const char *const *values, size_t count);

/// Reads ID3v2 SYLT frames (synchronised lyrics) of an MPEG file, timed in milliseconds; frames
/// timed in MPEG frames are skipped. Returns 0, or -1 when the file cannot be opened.
int tonearm_tag_synced_lyrics_read(const char *path, tonearm_synced_text **lines, size_t *count);
void tonearm_tag_synced_lyrics_free(tonearm_synced_text *lines, size_t count);

#ifdef __cplusplus
}
#endif

#endif
