#ifndef TONEARM_CGSTREAMER_SHIM_H
#define TONEARM_CGSTREAMER_SHIM_H
// GStreamer, pbutils and audio headers, plus static inline shims for what Swift cannot
// import: GObject cast/type macros and variadic calls.
#include <stdio.h>
#include <gst/gst.h>
#include <gst/pbutils/pbutils.h>
#include <gst/audio/audio.h>
#include <gst/base/gsttypefindhelper.h>
#include <gst/app/gstappsink.h>
#include <dlfcn.h>

/// Non-zero when GStreamer's libraries cannot be opened, with the loader's reason in `why` (Loader.c).
int tn_gst_library_problem(char *why, size_t size);

// MARK: - Casts and type checks (GObject macros)

static inline GObject *tn_object(gpointer p) { return G_OBJECT(p); }
static inline GstObject *tn_gst_object(gpointer p) { return GST_OBJECT(p); }
static inline GstElement *tn_element(gpointer p) { return GST_ELEMENT(p); }
static inline GstBin *tn_bin(gpointer p) { return GST_BIN(p); }
static inline GstAppSink *tn_app_sink(gpointer p) { return GST_APP_SINK(p); }
static inline gboolean tn_is_element(gpointer p) { return p != NULL && GST_IS_ELEMENT(p); }
static inline gboolean tn_is_bin(gpointer p) { return p != NULL && GST_IS_BIN(p); }

/// True for elements that are sinks themselves (basesinks set GST_ELEMENT_FLAG_SINK).
static inline gboolean tn_is_sink_element(gpointer p) {
    return p != NULL && GST_IS_ELEMENT(p) && !GST_IS_BIN(p)
        && GST_OBJECT_FLAG_IS_SET(p, GST_ELEMENT_FLAG_SINK);
}

// MARK: - The player's bus

/// What `tn_bus_keep_read` keeps: the message types the reader pops, and the element whose state changes it reads.
typedef struct { GstObject *top; GstMessageType read; } tn_bus_reading;

/// Drops, on the posting thread, what the bus's reader would pop only to discard: a type it does not read, a child's
/// state change (a Play or a Pause makes every element of playbin post one), a tag not from a sink. Each message
/// queued wakes the reader's thread; a dropped one costs the poster nothing more.
static GstBusSyncReply tn_bus_keep_read(GstBus *bus, GstMessage *m, gpointer data) {
    (void)bus;
    const tn_bus_reading *r = data;
    GstMessageType t = GST_MESSAGE_TYPE(m);
    gboolean unread = (t & r->read) == 0
        || (t == GST_MESSAGE_STATE_CHANGED && GST_MESSAGE_SRC(m) != r->top)
        || (t == GST_MESSAGE_TAG && !tn_is_sink_element(GST_MESSAGE_SRC(m)));
    if (!unread) return GST_BUS_PASS;
    gst_message_unref(m);
    return GST_BUS_DROP;
}

/// Keeps on `bus` only the messages of the types in `read` that its reader uses (see `tn_bus_keep_read`).
static inline void tn_bus_keep_only_read(GstBus *bus, GstElement *top, GstMessageType read) {
    tn_bus_reading *r = g_new(tn_bus_reading, 1);
    r->top = GST_OBJECT(top);
    r->read = read;
    gst_bus_set_sync_handler(bus, tn_bus_keep_read, r, g_free);
}

/// The structure a value holds, or NULL when it holds something else (GST_VALUE_HOLDS_STRUCTURE is a macro).
static inline const GstStructure *tn_value_structure(const GValue *v) {
    // By its get_type function: GST_VALUE_HOLDS_STRUCTURE reads a variable of the library, which a stub cannot stand for.
    return (v != NULL && G_VALUE_HOLDS(v, gst_structure_get_type())) ? gst_value_get_structure(v) : NULL;
}

// MARK: - Constants

static inline GstClockTime tn_clock_time_none(void) { return GST_CLOCK_TIME_NONE; }
static inline gboolean tn_ghost_pad_set_target(GstPad *ghost, GstPad *target) { return gst_ghost_pad_set_target(GST_GHOST_PAD(ghost), target); }
static inline GstClockTime tn_second(void) { return GST_SECOND; }
static inline GstClockTime tn_msecond(void) { return GST_MSECOND; }

// MARK: - Variadic g_object_set / g_object_get

static inline void tn_object_set_string(gpointer o, const gchar *name, const gchar *v) { g_object_set(o, name, v, NULL); }

/// Sets the object property `name` (a GTlsDatabase, as souphttpsrc's "tls-database") to the CAs of the PEM file
/// `path`. FALSE, with `*message` set (free it with g_free), when the file cannot be read.
/// GIO is not linked: loading it (and libmount, libblkid, libselinux) at every start cost a millisecond before main.
/// The element asking for a TLS database is an HTTP source, whose plugin has loaded GIO already.
static inline gboolean tn_object_set_tls_database(gpointer o, const gchar *name, const gchar *path, gchar **message) {
    void *gio = dlopen("libgio-2.0.so.0", RTLD_LAZY | RTLD_LOCAL);
    GObject *(*file_database_new)(const gchar *, GError **) =
        gio != NULL ? (GObject *(*)(const gchar *, GError **))dlsym(gio, "g_tls_file_database_new") : NULL;
    if (file_database_new == NULL) {
        *message = g_strdup("GIO's TLS support is not installed");
        if (gio != NULL) dlclose(gio);
        return FALSE;
    }
    GError *error = NULL;
    GObject *database = file_database_new(path, &error);
    // Kept loaded: the database's type and code live in GIO.
    if (database == NULL) {
        *message = g_strdup(error != NULL ? error->message : "unreadable");
        g_clear_error(&error);
        return FALSE;
    }
    g_object_set(o, name, database, NULL);
    g_object_unref(database);
    return TRUE;
}
static inline void tn_object_set_double(gpointer o, const gchar *name, gdouble v) { g_object_set(o, name, v, NULL); }
static inline void tn_object_set_boolean(gpointer o, const gchar *name, gboolean v) { g_object_set(o, name, v, NULL); }
static inline void tn_object_set_int64(gpointer o, const gchar *name, gint64 v) { g_object_set(o, name, v, NULL); }
static inline void tn_object_set_object(gpointer o, const gchar *name, gpointer v) { g_object_set(o, name, v, NULL); }
static inline gdouble tn_object_get_double(gpointer o, const gchar *name) {
    gdouble v = 0; g_object_get(o, name, &v, NULL); return v;
}
/// Returns a newly allocated string (g_free it) or NULL.
static inline gchar *tn_object_get_string(gpointer o, const gchar *name) {
    gchar *v = NULL; g_object_get(o, name, &v, NULL); return v;
}

// MARK: - Signals (g_signal_connect is a macro)

static inline gulong tn_signal_connect(gpointer instance, const gchar *signal, GCallback cb, gpointer data) {
    return g_signal_connect_data(instance, signal, cb, data, NULL, (GConnectFlags)0);
}

// MARK: - Element / bin helpers

/// The factory name of an element ("fakesink", "pulsesink"…), or NULL.
static inline const gchar *tn_element_factory_name(GstElement *e) {
    GstElementFactory *f = gst_element_get_factory(e);
    return f ? gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(f)) : NULL;
}

/// The first child of a bin, with a new reference (gst_object_unref it), or NULL.
static inline GstElement *tn_bin_first_child(GstBin *bin) {
    GstElement *e = NULL;
    GST_OBJECT_LOCK(bin);
    if (bin->children != NULL) e = GST_ELEMENT(gst_object_ref(bin->children->data));
    GST_OBJECT_UNLOCK(bin);
    return e;
}

/// The location of the first filesink among a bin's children (g_free it), or NULL.
static inline gchar *tn_bin_file_sink_location(GstBin *bin) {
    gchar *location = NULL;
    GST_OBJECT_LOCK(bin);
    for (GList *l = bin->children; l != NULL && location == NULL; l = l->next) {
        const gchar *name = tn_element_factory_name(GST_ELEMENT(l->data));
        if (name != NULL && g_str_equal(name, "filesink")) g_object_get(l->data, "location", &location, NULL);
    }
    GST_OBJECT_UNLOCK(bin);
    return location;
}

static inline gint tn_bin_child_count(GstBin *bin) {
    GST_OBJECT_LOCK(bin);
    gint n = bin->numchildren;
    GST_OBJECT_UNLOCK(bin);
    return n;
}

static inline GstState tn_state_target(GstElement *e) {
    GST_OBJECT_LOCK(e);
    GstState s = GST_STATE_TARGET(e);
    GST_OBJECT_UNLOCK(e);
    return s;
}

/// The element's current state without waiting.
static inline GstState tn_state_current(GstElement *e) {
    GstState cur = GST_STATE_VOID_PENDING, pending = GST_STATE_VOID_PENDING;
    gst_element_get_state(e, &cur, &pending, 0);
    return cur;
}

/// Caps of a static pad template if it is a sink template (new reference), else NULL.
static inline GstCaps *tn_static_sink_template_caps(gconstpointer tmpl) {
    const GstStaticPadTemplate *t = (const GstStaticPadTemplate *)tmpl;
    if (t->direction != GST_PAD_SINK) return NULL;
    return gst_static_caps_get((GstStaticCaps *)&t->static_caps);
}

/// The path of an object's name chain ("/pipeline/bin/element"); g_free it.
static inline gchar *tn_object_path(gpointer o) { return gst_object_get_path_string(GST_OBJECT(o)); }

// MARK: - Type finding

/// Typefinds the first bytes of a file. Returns the media type name (g_free it) and its
/// probability, or NULL when nothing recognises the data or the file cannot be read.
static inline gchar *tn_typefind_file(const gchar *path, gsize max_bytes, guint *probability) {
    *probability = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    guint8 *data = g_malloc(max_bytes);
    gsize n = fread(data, 1, max_bytes, f);
    fclose(f);
    gchar *name = NULL;
    if (n > 0) {
        GstTypeFindProbability prob = GST_TYPE_FIND_NONE;
        GstCaps *caps = gst_type_find_helper_for_data(NULL, data, n, &prob);
        if (caps != NULL) {
            if (gst_caps_get_size(caps) > 0) name = g_strdup(gst_structure_get_name(gst_caps_get_structure(caps, 0)));
            *probability = (guint)prob;
            gst_caps_unref(caps);
        }
    }
    g_free(data);
    return name;
}

#endif
