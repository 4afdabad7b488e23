#!/usr/bin/env bash
# Runs the CLI and curl examples of docs/guide/governance.md against a running Wharf, in the
# guide's order, and checks what each one prints. Names come from variables; the command lines
# are the guide's (the guide says `wharf` or `npx wharf`; here that is "$WHARF").
#
#   WHARF_API_URL    the platform API, e.g. http://127.0.0.1:8080
#   WHARF_TOKEN      a platform-administrator API token (`wharf admin token` on the server's host)
#   WHARF_REGISTRY   host:port of the registry (plain HTTP), e.g. 127.0.0.1:5000
#   WHARF            how to run the CLI, e.g. "node /path/to/wharf/bin/wharf.js"
#   WHARF_WEBHOOK_URL  optional: a webhook receiver answering 2xx (the webhook steps need it; a
#                    loopback URL needs the server's --events-allow-loopback true)
#   WALK_ORG         optional: the organization to create (default acme)
#
# Needs bash, curl, jq, skopeo, tar, gzip, sha256sum. Prints "walkthrough complete" at the end;
# exits non-zero at the first example that does not behave as the guide says.
set -euo pipefail

: "${WHARF_API_URL:?set WHARF_API_URL}" "${WHARF_TOKEN:?set WHARF_TOKEN}"
: "${WHARF_REGISTRY:?set WHARF_REGISTRY}" "${WHARF:?set WHARF}"
export WHARF_API_URL WHARF_TOKEN

for tool in skopeo curl jq tar gzip sha256sum; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "walkthrough skipped: $tool not installed (apt-get install $tool)"
    exit 0
  fi
done

ORG=${WALK_ORG:-acme}
IMAGE="$ORG/app"
REG="$WHARF_REGISTRY"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# The CLI keeps no login of its own here; skopeo reads no credentials or mirrors of the machine.
export WHARF_CONFIG_DIR="$WORK/wharf"
export REGISTRY_AUTH_FILE="$WORK/auth.json" CONTAINERS_REGISTRIES_CONF="$WORK/registries.conf"
echo '{}' >"$REGISTRY_AUTH_FILE"
: >"$CONTAINERS_REGISTRIES_CONF"
# shellcheck disable=SC2206 # WHARF is a command line ("node bin/wharf.js")
WHARF_CMD=($WHARF)
wharf() { "${WHARF_CMD[@]}" "$@"; }
# skopeo needs a trust policy; without one on the machine, accept anything (as the tests do).
SKOPEO=(skopeo)
if [[ ! -e /etc/containers/policy.json && ! -e "${XDG_CONFIG_HOME:-$HOME/.config}/containers/policy.json" ]]; then
  SKOPEO=(skopeo --insecure-policy)
fi
skopeo() { command "${SKOPEO[@]}" "$@"; }

step() { printf '\n== %s\n' "$*"; }
fail() {
  echo "walkthrough FAILED: $*" >&2
  exit 1
}
# check OUTPUT REGEX [WHAT]: OUTPUT must match the extended REGEX.
check() {
  grep -qE -- "$2" <<<"$1" || fail "${3:-output} does not match /$2/: $1"
}
# check_not OUTPUT REGEX [WHAT]
check_not() {
  if grep -qE -- "$2" <<<"$1"; then fail "${3:-output} matches /$2/ but must not: $1"; fi
}
# say CMD…: prints the command line, with the tokens' values replaced by their names.
say() {
  local line="$*"
  line=${line//"$WHARF_TOKEN"/\$WHARF_TOKEN}
  [[ -z "${RTOKEN:-}" ]] || line=${line//"$RTOKEN"/\$RTOKEN}
  echo "\$ $line${SAY_SUFFIX:-}"
}
# show CMD…: prints the command and its output, keeps the output in $OUT; fails when it fails.
show() {
  say "$@"
  OUT=$("$@") || fail "exit $? from: $*"
  printf '%s\n' "$OUT"
}
# refused CMD…: the command must fail; its output (stdout and stderr) is kept in $OUT.
refused() {
  SAY_SUFFIX="   # refused" say "$@"
  if OUT=$("$@" 2>&1); then fail "succeeded but must be refused: $*"; fi
  printf '%s\n' "$OUT"
}

# make_image DIR TAG TEXT: writes an OCI layout holding one small image tagged TAG (a file with
# TEXT), and prints its manifest digest. Same TEXT, same digest.
make_image() {
  local dir=$1 tag=$2 text=$3 tmp ld cd md
  tmp=$(mktemp -d "$WORK/img.XXXX")
  mkdir -p "$dir/blobs/sha256" "$tmp/root"
  printf '%s\n' "$text" >"$tmp/root/hello.txt"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$tmp/root" -cf - hello.txt | gzip -n >"$tmp/layer"
  ld=$(sha256sum "$tmp/layer" | cut -d' ' -f1)
  printf '{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$(gzip -dc "$tmp/layer" | sha256sum | cut -d' ' -f1)" >"$tmp/config"
  cd=$(sha256sum "$tmp/config" | cut -d' ' -f1)
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%d}]}' \
    "$cd" "$(stat -c %s "$tmp/config")" "$ld" "$(stat -c %s "$tmp/layer")" >"$tmp/manifest"
  md=$(sha256sum "$tmp/manifest" | cut -d' ' -f1)
  cp "$tmp/layer" "$dir/blobs/sha256/$ld"
  cp "$tmp/config" "$dir/blobs/sha256/$cd"
  cp "$tmp/manifest" "$dir/blobs/sha256/$md"
  printf '{"imageLayoutVersion":"1.0.0"}' >"$dir/oci-layout"
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%d,"annotations":{"org.opencontainers.image.ref.name":"%s"}}]}' \
    "$md" "$(stat -c %s "$tmp/manifest")" "$tag" >"$dir/index.json"
  rm -rf "$tmp"
  echo "sha256:$md"
}

cd "$WORK"

##############################################################################################
step "an organization and a repo"
show wharf iam orgs create "$ORG"
ORG_UID=$(wharf iam orgs describe "$ORG" -o id)
ACME=$ORG_UID
check "$ORG_UID" '^[0-9a-f]{40}$' "the organization's uid"
show wharf images repos create "$IMAGE"
check "$OUT" "\"name\": \"app\"" "the repo"

step "push two images to $IMAGE:latest (docs/guide/registry.md)"
V1=$(make_image ./layout v1 "walkthrough image one")
V2=$(make_image ./layout-v2 v2 "walkthrough image two")
RTOKEN=$(wharf auth token --audience registry)
show skopeo copy --dest-tls-verify=false --dest-creds "_token:$RTOKEN" oci:./layout:v1 "docker://$REG/$IMAGE:latest"
show skopeo copy --dest-tls-verify=false --dest-creds "_token:$RTOKEN" oci:./layout-v2:v2 "docker://$REG/$IMAGE:latest"

##############################################################################################
step "tag history"
show wharf images history "$IMAGE:latest" -o json
[[ $(jq -r '[.[].digest] | join(" ")' <<<"$OUT") == "$V1 $V2" ]] || fail "history is not v1 then v2: $OUT"
T2=$(jq -r '.[1].time' <<<"$OUT")

step "restore the tag by --digest and by --at"
show wharf images tags restore "$IMAGE:latest" --digest "$V1"
check "$OUT" "\"digest\": \"$V1\"" "restore --digest"
show wharf images tags restore "$IMAGE:latest" --at "$T2"
check "$OUT" "\"digest\": \"$V2\"" "restore --at (the digest named at $T2)"
show wharf images history "$IMAGE:latest" -o json
[[ $(jq length <<<"$OUT") == 4 ]] || fail "each restore appends a history record: $OUT"

step "restore over the API (curl)"
TAG_UID=$(wharf images tags list "$IMAGE" -o json | jq -r '.[] | select(.name == "latest") | .uid')
T1=$(wharf images history "$IMAGE:latest" -o json | jq -r '.[0].time')
show curl -sX POST "$WHARF_API_URL/registry/v2/tags/$TAG_UID:restore" \
  -H "authorization: Bearer $WHARF_TOKEN" -d "{\"time\": \"$T1\"}"
check "$OUT" "\"digest\":\"$V1\"" "curl :restore by time"

step "a deleted tag comes back by its uid"
show wharf images tags delete "$IMAGE:latest"
show wharf images tags restore "$TAG_UID" --digest "$V2"
check "$OUT" "\"uid\": \"$TAG_UID\"" "the restored tag keeps its uid"
check "$OUT" "\"digest\": \"$V2\"" "restore of a deleted tag"

##############################################################################################
step "immutable tags"
show wharf images immutability create "$ORG" --pattern 'v*' --pattern '!latest' --description "release tags"
RULE=$(jq -r .uid <<<"$OUT")
check "$RULE" "^$ORG_UID/[0-9a-f]+$" "the rule's uid"
show wharf images immutability create "$IMAGE" --pattern stable
REPO_RULE=$(jq -r .uid <<<"$OUT")
show wharf images immutability list --parent "$ORG" -o table
check "$OUT" 'v\* !latest' "the organization's rule"
check "$OUT" 'stable' "the repo's rule"
show wharf images immutability describe "$RULE"
check "$OUT" 'release tags' "describe"
show curl -sX POST "$WHARF_API_URL/registry/v2/immutabilityRules/$ORG_UID" \
  -H "authorization: Bearer $WHARF_TOKEN" -d '{"tagPatterns": ["v*", "!latest"], "description": "release tags"}'
RULE_UID=$(jq -r .uid <<<"$OUT")
check "$RULE_UID" "^$ORG_UID/[0-9a-f]+$" "a rule created over REST"
show curl -s "$WHARF_API_URL/registry/v2/immutabilityRules?uidp.descendants_of=$ORG_UID" -H "authorization: Bearer $WHARF_TOKEN"
check "$OUT" "\"uid\":\"$RULE\"" "the rules over REST"
check "$OUT" '"totalCount":"3"' "three rules"
show curl -sX PATCH "$WHARF_API_URL/registry/v2/immutabilityRules/$RULE_UID?updateMask=tag_patterns" \
  -H "authorization: Bearer $WHARF_TOKEN" -d '{"tagPatterns": ["v*", "!v*-rc*"]}'
check "$OUT" '"tagPatterns":\["v\*","!v\*-rc\*"\]' "PATCH over REST"
show wharf images immutability delete "$RULE_UID"

echo "-- v1.2 is pushed once; moving it is refused, pushing its digest again is not"
show skopeo copy --dest-tls-verify=false --dest-creds "_token:$RTOKEN" oci:./layout:v1 "docker://$REG/$IMAGE:v1.2"
refused skopeo copy --dest-tls-verify=false --dest-creds "_token:$RTOKEN" oci:./layout-v2:v2 "docker://$REG/$IMAGE:v1.2"
check "$OUT" "denied: tag v1\.2 of $IMAGE is immutable \(rule $RULE\)" "skopeo's refusal"
show skopeo copy --dest-tls-verify=false --dest-creds "_token:$RTOKEN" oci:./layout:v1 "docker://$REG/$IMAGE:v1.2"
refused wharf images tags delete "$IMAGE:v1.2"
check "$OUT" 'TAG_IMMUTABLE|is immutable' "DeleteTag of a protected tag"

show wharf images immutability update "$RULE" --pattern 'v*' --pattern '!v*-rc*'
check "$OUT" '"!v\*-rc\*"' "the updated patterns"
show wharf images immutability delete "$REPO_RULE"
show wharf images immutability list --parent "$ORG" -o json
[[ $(jq length <<<"$OUT") == 1 ]] || fail "one rule is left: $OUT"

##############################################################################################
step "retention"
echo "-- more tags: dev-1 (kept: pushed within 48h), scratch (no rule keeps it)"
show skopeo copy --dest-tls-verify=false --dest-creds "_token:$RTOKEN" oci:./layout-v2:v2 "docker://$REG/$IMAGE:dev-1"
show skopeo copy --dest-tls-verify=false --dest-creds "_token:$RTOKEN" oci:./layout-v2:v2 "docker://$REG/$IMAGE:scratch"
# keep the 10 latest v* tags of acme/app, dev-* tags for two days, and anything pulled in 30 days
show wharf images retention create "$ORG" \
  --rule 'repo=app,tags=v*,latest=10' \
  --rule 'tags=dev-*,pushed=48h' \
  --rule 'pulled=720h' \
  --schedule 24h --description "keep what matters"
POLICY=$(jq -r .uid <<<"$OUT")
check "$POLICY" "^$ORG_UID/[0-9a-f]+$" "the policy's uid"
show wharf images retention list --parent "$ORG" -o table
check "$OUT" 'keep what matters' "the listed policy"
show wharf images retention preview "$POLICY" -o table # REPO, TAG, DIGEST, REASON; changes nothing
check "$OUT" 'REASON' "the preview's header"
check "$OUT" "│ scratch +│" "the preview"
check_not "$OUT" '│ (v1\.2|dev-1) +│' "the preview"
show curl -s -H "authorization: Bearer $WHARF_TOKEN" -X POST "$WHARF_API_URL/registry/v2/retentionPolicies/$POLICY:preview" -d '{}'
PREVIEWED=$(jq -r '[(.tags // [])[].name] | sort | join(" ")' <<<"$OUT")
check "$PREVIEWED" '(^| )scratch( |$)' "the preview over REST"
show wharf images tags list "$IMAGE" -o json
check "$OUT" '"name": "scratch"' "preview changes nothing"
EXPECTED=$(jq -r --arg p "$PREVIEWED" '[.[].name] - ($p | split(" ")) | sort | join(" ")' <<<"$OUT")
show wharf images retention run "$POLICY" # removes those tags, prints them
check "$OUT" 'scratch' "the run"
show wharf images tags list "$IMAGE" -o json
[[ $(jq -r '[.[].name] | sort | join(" ")' <<<"$OUT") == "$EXPECTED" ]] ||
  fail "the run removed exactly the previewed tags ($PREVIEWED), leaving $EXPECTED: $OUT"
check "$OUT" '"name": "v1\.2"' "the immutable tag survives"
check "$OUT" '"name": "dev-1"' "dev-1 is kept"
show wharf images retention update "$POLICY" --schedule "" # manual runs only from now on
check_not "$OUT" '"schedule": "24h"' "the schedule is cleared"

step "retention over the API (curl)"
TOKEN=$WHARF_TOKEN
API=$WHARF_API_URL
ORG=$(wharf iam orgs describe "$ORG" -o id)
POLICY=$(curl -s -H "authorization: Bearer $TOKEN" -X POST "$API/registry/v2/retentionPolicies/$ORG" \
  -d '{"description": "keep what matters", "schedule": "24h",
       "rules": [{"repoPattern": "app", "tagPattern": "v*", "keepLatest": 10},
                 {"tagPattern": "dev-*", "keepPushedWithin": "48h"},
                 {"keepPulledWithin": "720h"}]}' | jq -r .uid)
ORG=${WALK_ORG:-acme}
check "$POLICY" "^$ORG_UID/[0-9a-f]+$" "the policy created over REST"
show curl -s -H "authorization: Bearer $TOKEN" -X POST "$API/registry/v2/retentionPolicies/$POLICY:run" -d '{}'
check "$OUT" "\"uid\":\"$POLICY/[0-9a-f]{16}\"" "the run over REST"
check_not "$OUT" '"deletedTags"' "nothing left to remove"
show curl -s -H "authorization: Bearer $TOKEN" -X PATCH "$API/registry/v2/retentionPolicies/$POLICY?update_mask=schedule" \
  -d '{"schedule": ""}'
check_not "$OUT" '"schedule":"24h"' "the schedule is cleared"
show curl -s -H "authorization: Bearer $TOKEN" -X POST "$API/registry/v2/retentionPolicies/$ORG_UID" \
  -d '{"rules":[{"keepPushedWithin":"30 days"}]}'
check "$OUT" '"field":"rules\[0\]\.keepPushedWithin"' "a bad rule names its field"

##############################################################################################
step "quotas and usage"
show wharf images quota set "$ORG" --storage 10GiB --repos 100
check "$OUT" '"storageBytes": "10737418240"' "the storage quota"
show wharf images quota set "$ORG" --repos unlimited # storage stays 10 GiB
check "$OUT" '"storageBytes": "10737418240"' "storage stays"
check "$OUT" '"repoCount": "0"' "repos unlimited"
show wharf images usage "$ORG" -o table
check "$OUT" 'STORAGE QUOTA\W+10\.0 GiB' "usage"
check "$OUT" 'REPOS\W+1\W' "usage"
show curl -sS -X PATCH "$WHARF_API_URL/registry/v2/quotas/$ACME" \
  -H "authorization: Bearer $WHARF_TOKEN" -H 'content-type: application/json' \
  -d '{"storageBytes": "10737418240", "repoCount": "100"}'
check "$OUT" '"repoCount":"100"' "PATCH quotas"
show curl -sS "$WHARF_API_URL/registry/v2/usage/$ACME" -H "authorization: Bearer $WHARF_TOKEN"
USED=$(jq -r .storageBytes <<<"$OUT")
check "$USED" '^[1-9][0-9]*$' "storageBytes"
echo "-- a push past the quota is refused with the usage and the limit"
LIMIT=$((USED + 16))
show wharf images quota set "$ORG" --storage "$LIMIT"
make_image ./layout-v3 v3 "walkthrough image three, too big for the quota" >/dev/null
refused skopeo copy --dest-tls-verify=false --dest-creds "_token:$RTOKEN" oci:./layout-v3:v3 "docker://$REG/$IMAGE:v3"
check "$OUT" "denied: quota exceeded: $ORG uses $USED of $LIMIT bytes" "skopeo's refusal"
show wharf images quota set "$ORG" --storage unlimited --repos unlimited

##############################################################################################
step "the audit log"
show wharf audit list --org "$ORG" -o table # acme's records, newest first
check "$OUT" 'registry\.push' "the pushes"
check "$OUT" 'RetentionPoliciesService' "the retention calls"
show wharf audit list --org "$ORG" --result denied --since 24h -o json # what was refused today
check "$OUT" '"resource": "'"$IMAGE"':v1\.2"' "the refused move of v1.2"
check "$OUT" '"code": "DENIED"' "refusals"
check_not "$OUT" '"code": "OK"' "refusals only"
show wharf audit list --org "$ORG" --action registry.push --limit 10 -o json
[[ $(jq '[.[] | select(.action != "registry.push")] | length' <<<"$OUT") == 0 ]] || fail "only pushes: $OUT"
ACTOR=$(jq -r '.[0].actor.identity' <<<"$OUT")
show wharf audit list --org "$ORG" --actor "$ACTOR" --limit 5 -o json # one identity's actions
[[ $(jq --arg a "$ACTOR" '[.[] | select(.actor.identity != $a)] | length' <<<"$OUT") == 0 ]] || fail "one actor: $OUT"
show wharf audit list --org "$ORG" --resource "$IMAGE:v1.2" -o json # everything done to a tag
check "$OUT" '"action": "registry.push"' "the pushes of v1.2"
show wharf audit list --org "$ORG" --until 2026-11-20T00:00:00Z -o json
[[ $(jq length <<<"$OUT") == 0 ]] || fail "nothing before the walkthrough: $OUT"
show curl -s -H "Authorization: Bearer $WHARF_TOKEN" \
  "$WHARF_API_URL/audit/v2/records?uidp.descendants_of=$ACME&result=DENIED&page_size=50"
check "$OUT" '"code":"DENIED"' "the records over REST"

##############################################################################################
step "webhooks: redeliver, redrive, replay"
if [[ -z "${WHARF_WEBHOOK_URL:-}" ]]; then
  echo "skipped: set WHARF_WEBHOOK_URL to a receiver answering 2xx"
else
  SINCE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  show wharf events subscriptions create --parent "$ORG" --sink "$WHARF_WEBHOOK_URL"
  SUB=$(wharf events subscriptions list --parent "$ORG" -o id | head -1)
  check "$SUB" "^$ORG_UID/" "the subscription"
  # something to deliver besides the subscription's own creation
  show wharf images tags create "$IMAGE:walk" --digest "$V2"
  show wharf events deliveries wait --subscription "$SUB" --timeout 60s
  # what was delivered, and the dead letters
  show wharf events deliveries list --subscription "$SUB" --delivered -o json
  DELIVERY=$(jq -r '.[0].uid' <<<"$OUT")
  EVENT=$(jq -r '.[0].eventId' <<<"$OUT")
  check "$DELIVERY" "^$SUB/[0-9a-f]{16}$" "a delivered delivery"
  show wharf events deliveries list --subscription "$SUB" --failed -o json
  [[ $(jq length <<<"$OUT") == 0 ]] || fail "no dead letters: $OUT"
  # one delivery again (prints the new delivery: same event id, redeliveryOf the old uid)
  show wharf events deliveries redeliver "$DELIVERY" -o json
  check "$OUT" "\"eventId\": \"$EVENT\"" "the same CloudEvent"
  check "$OUT" "\"redeliveryOf\": \"$DELIVERY\"" "redeliveryOf"
  # every dead letter again, once the sink is fixed
  show wharf events subscriptions redrive "$SUB"
  check "$OUT" '^requeued 0 deliveries$' "redrive"
  show wharf events deliveries wait --subscription "$SUB" --timeout 60s
  # everything since a time, e.g. to a receiver that lost a day
  show wharf events subscriptions replay "$SUB" --since "$SINCE"
  check "$OUT" '^requeued [1-9][0-9]* deliveries$' "replay"
  show curl -s -H "authorization: Bearer $WHARF_TOKEN" \
    "$WHARF_API_URL/events/v2/deliveries?subscriptionUid=$SUB&state=delivered"
  check "$OUT" "\"eventId\":\"$EVENT\"" "deliveries over REST"
  show curl -s -X POST -H "authorization: Bearer $WHARF_TOKEN" -d '{}' \
    "$WHARF_API_URL/events/v2/deliveries/$DELIVERY:redeliver"
  check "$OUT" "\"redeliveryOf\":\"$DELIVERY\"" ":redeliver over REST"
  show curl -s -X POST -H "authorization: Bearer $WHARF_TOKEN" -d '{}' \
    "$WHARF_API_URL/events/v2/subscriptions/$SUB:redrive"
  check "$OUT" '"requeued":"0"' ":redrive over REST"
  show wharf events deliveries wait --subscription "$SUB" --timeout 60s
  show curl -s -X POST -H "authorization: Bearer $WHARF_TOKEN" -d "{\"since\":\"$SINCE\"}" \
    "$WHARF_API_URL/events/v2/subscriptions/$SUB:replay"
  check "$OUT" '"requeued":"[1-9][0-9]*"' ":replay over REST"
  show wharf events deliveries wait --subscription "$SUB" --timeout 60s
fi

echo
echo "walkthrough complete"
