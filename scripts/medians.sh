# Sourced by the scripts that time a page again and again (catalog-cold,
# search-cold): `medians FILE PLACES NOUN` reads lines `KEY|...|VALUE`
# (every field but the last is the key) and prints, for each key in
# sorted order, `KEY: median (min-max), N NOUN`, to PLACES decimals.
medians() {
    sort "$1" | awk -F'|' -v places="$2" -v noun="$3" '
        {
            key = $1
            for (f = 2; f < NF; f++) key = key "|" $f
            n[key]++; v[key, n[key]] = $NF
            if (!(key in seen)) { seen[key] = 1; keys[++k] = key }
        }
        END {
            form = "%s: %." places "f (%." places "f-%." places "f), %d %s\n"
            for (i = 1; i <= k; i++) {
                key = keys[i]; m = n[key]
                for (x = 1; x <= m; x++) s[x] = v[key, x]
                for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++) if (s[y] < s[x]) { t = s[x]; s[x] = s[y]; s[y] = t }
                printf form, key, (m % 2 ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2), s[1], s[m], m, noun
            }
        }'
}
