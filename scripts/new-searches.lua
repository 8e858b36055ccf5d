-- wrk's requests for searches nobody asked before: a common word and a
-- random three-letter prefix, so the page cache cannot answer them. With
-- SITEMAP_EVERY=N in the environment, every Nth request is the sitemap
-- instead (its index and its first file in turn). Used by load.sh's
-- hammer and rss-under-load.sh.
local words = { "egg", "oil", "flour", "butter", "garlic", "onion", "salt", "milk" }
local letters = "abcdefghijklmnopqrstuvwxyz"
local every = tonumber(os.getenv("SITEMAP_EVERY") or "0")
local n = 0
function request()
  n = n + 1
  if every > 0 and n % every == 0 then
    return wrk.format("GET", (n % (2 * every) == 0) and "/sitemap.xml" or "/sitemaps/1.xml")
  end
  local prefix = ""
  for _ = 1, 3 do
    local i = math.random(#letters)
    prefix = prefix .. letters:sub(i, i)
  end
  return wrk.format("GET", "/search?q=" .. words[math.random(#words)] .. "+" .. prefix)
end
