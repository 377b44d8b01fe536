"""The JavaScript that draws the charts, inlined into every page: Vega-Embed with Vega and
Vega-Lite, as vl-convert-python bundles them (no network at view time). Bundling takes seconds, so the
result is kept per vl-convert and Vega-Lite version in the ntscope cache
($NTSCOPE_CACHE, default ~/.cache/ntscope); an unwritable cache only costs the time."""
import hashlib
import importlib.metadata
import os
import tempfile

# The global the page script uses: window.vegaEmbed (Vega-Embed, with Vega, Vega-Lite and
# vega-tooltip inside; vl-convert's bundler gives no usable handle on vega or vega-lite
# alone).
SNIPPET = "window.vegaEmbed = vegaEmbed;"

_memo = {}


def vegalite_version():
    """The Vega-Lite version Altair writes specs for, as vl-convert names it (e.g. v6_4)."""
    from altair.utils._importers import vl_version_for_vl_convert
    return vl_version_for_vl_convert()


def cache_path(vl_version):
    from ntscope.common.cache import cache_dir
    key = hashlib.sha256(SNIPPET.encode()).hexdigest()[:12]
    return os.path.join(cache_dir(), "plots",
                        f"vega-bundle-{importlib.metadata.version('vl-convert-python')}-{vl_version}-{key}.js")


def javascript():
    """The bundle's text (memoized in the process, cached on disk)."""
    vl_version = vegalite_version()
    if vl_version in _memo:
        return _memo[vl_version]
    path = cache_path(vl_version)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        text = None
    if not text or "vegaEmbed" not in text:
        import vl_convert
        text = vl_convert.javascript_bundle(SNIPPET, vl_version=vl_version)
        tmp = None
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".bundle-")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
        except OSError:
            # read-only or full cache: the next page bundles again
            if tmp and os.path.exists(tmp):
                os.unlink(tmp)
    if "</script" in text.lower():
        raise RuntimeError("the Vega bundle contains '</script': it cannot be inlined; this is a bug of "
                           "the vl-convert-python version in constraints.txt, pin another")
    _memo[vl_version] = text
    return text
