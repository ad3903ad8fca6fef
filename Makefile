# The front door. Every target installs what it needs; see README.md.
SHELL := /usr/bin/env bash
GO    ?= go
# The engine (pkg/) is a module of its own; make test runs the packages of both modules.
PKGS  ?= ./... ./pkg/...

.PHONY: test bench lint fuzz

# A package's tests may take a while on a loaded machine (infra/workload runs the whole pipeline
# several times): go test's 10-minute default per package is raised, well within CI's budget.
# It bounds a hang, never a package's work (docs/benchmarks.md has the suite's times).
TEST_TIMEOUT ?= 60m
# One package more than the machine has cores: many of them mostly wait (visibility timeouts,
# pollers, retries), so the extra one keeps the cores busy (measured: docs/benchmarks.md).
TEST_P ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) + 1 )))
# go test's stream goes through infra/cmd/testreport: a line per package, each failure's own
# lines, a summary; every package's whole output in TEST_LOGS/<package>.log. The emulators and
# every process of the run end with it, however it ends (infra/emulators.sh, infra/reap).
TEST_LOGS  ?= .local/test-logs
TESTREPORT := .local/bin/testreport
.PHONY: $(TESTREPORT)
$(TESTREPORT):
	@GOWORK=off $(GO) build -o $@ ./infra/cmd/testreport
# One go test runs both modules' packages through a workspace of the two, made here and never
# committed: each module builds and tests alone (.ci/run tests the engine's alone).
WORKSPACE := .local/go.work
$(WORKSPACE): go.mod pkg/go.mod
	@mkdir -p $(@D) && rm -f $@ && GOWORK=$(CURDIR)/$@ $(GO) work init . ./pkg
## test: every test of both modules, with DynamoDB Local, fauxqs and kinesalite started for the run
##   and stopped after it; a line per package, the failures' own lines, a summary; each package's
##   whole log in .local/test-logs/
test: export GOWORK = $(CURDIR)/$(WORKSPACE)
test: $(WORKSPACE) $(TESTREPORT)
	infra/emulators.sh $(TESTREPORT) -logs $(TEST_LOGS) -- $(GO) test -json -race -count=1 -p $(TEST_P) -timeout $(TEST_TIMEOUT) $(PKGS)

## bench: the engine benchmarks against DynamoDB Local: a line per variant as it ends, then the
##   table (see docs/benchmarks.md) and the calls a handler's read adds (reads-one vs reads-nothing);
##   then the side-by-side benchmark (floor, engine, packing, +5 ms latency)
##   with its targets and the cost model; then the three ports (SQS, DynamoDB Streams,
##   Kinesis) packed and unpacked; then the local cloud's gatekeeper, calls direct and through it;
##   raw output in .local/bench*.txt
BENCH_N ?= 2000
bench:
	@mkdir -p .local
	@cd pkg && $(GO) test -c -o ../.local/bench.test ./idempotency/
	@echo "bench: 5 variants and 2 of reads x $(BENCH_N) messages, one at a time, against DynamoDB Local"
	@cd pkg/idempotency && ../../infra/emulators.sh ../../.local/bench.test -test.run '^$$' -test.bench . \
	  -test.benchtime $(BENCH_N)x -test.count 1 >../../.local/bench.txt || { cat ../../.local/bench.txt; exit 1; }
	@echo; sed -n '/variant.*msgs\/s/,$$p' .local/bench.txt | grep -v -E '^(PASS|ok |Benchmark)'; \
	  echo "(raw output: .local/bench.txt)"
	@cd pkg && $(GO) test -c -o ../.local/bench-sqsbatch.test ./sqsbatch/
	@echo; echo "bench: side by side, 8 variants x $(BENCH_N) messages interleaved, direct and +5 ms per round trip"
	@cd pkg/sqsbatch && ../../infra/emulators.sh ../../.local/bench-sqsbatch.test -test.run '^$$' -test.bench SideBySide \
	  -test.benchtime $(BENCH_N)x -test.count 1 >../../.local/bench-sidebyside.txt || { cat ../../.local/bench-sidebyside.txt; exit 1; }
	@grep -v -E '^(PASS|ok |Benchmark|goos|goarch|pkg:|cpu:)|ns/op' .local/bench-sidebyside.txt; \
	  echo "(raw output: .local/bench-sidebyside.txt)"
	@cd pkg && $(GO) test -c -o ../.local/bench-ports.test ./batch/
	@echo; echo "bench: the ports (SQS, DynamoDB Streams, Kinesis) on one engine, packed and unpacked, $(BENCH_N) records each"
	@cd pkg/batch && ../../infra/emulators.sh ../../.local/bench-ports.test -test.run '^$$' -test.bench Ports \
	  -test.benchtime $(BENCH_N)x -test.count 1 >../../.local/bench-ports.txt || { cat ../../.local/bench-ports.txt; exit 1; }
	@grep -v -E '^(PASS|ok |Benchmark|goos|goarch|pkg:|cpu:)|ns/op' .local/bench-ports.txt; \
	  echo "(raw output: .local/bench-ports.txt)"
	@$(GO) test -c -o .local/bench-gatekeeper.test ./infra/gatekeeper/
	@echo; echo "bench: the local cloud's gatekeeper, $(BENCH_N) calls of each kind direct and through it"
	@cd infra/gatekeeper && ../../infra/emulators.sh ../../.local/bench-gatekeeper.test -test.run '^$$' -test.bench Gatekeeper \
	  -test.benchtime $(BENCH_N)x -test.count 1 >../../.local/bench-gatekeeper.txt || { cat ../../.local/bench-gatekeeper.txt; exit 1; }
	@grep -v -E '^(PASS|ok |Benchmark|goos|goarch|pkg:|cpu:)|ns/op' .local/bench-gatekeeper.txt; \
	  echo "(raw output: .local/bench-gatekeeper.txt)"

## fuzz: fuzz the CloudEvents decoder (FUZZTIME=30s)
FUZZTIME ?= 30s
fuzz:
	cd pkg && $(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime $(FUZZTIME) ./cloudevent/

## lint: gofmt, go vet and golangci-lint (errcheck, staticcheck, unused, govet, ineffassign;
##   .golangci.yml) on this module, on the engine's (pkg/) and on pkg/testdata/shop, a module
##   importing the engine
GOLANGCI := .local/bin/golangci-lint
# Its cache is the checkout's own: golangci-lint keys cached findings by content, not by path,
# so a cache shared with another checkout of the same files replays that checkout's paths,
# where its //nolint lines cannot be read (a finding the source already answers).
GOLANGCI_RUN := GOLANGCI_LINT_CACHE=$(CURDIR)/.local/cache/golangci-lint
# Built from infra/tools/go.mod, which pins it by a tool line (a module of its own, so that the
# linter's dependencies never enter the engine's module graph).
$(GOLANGCI): infra/tools/go.mod infra/tools/go.sum
	@echo "building golangci-lint (pinned in infra/tools/go.mod)"
	@cd infra/tools && $(GO) build -o $(CURDIR)/$(GOLANGCI) github.com/golangci/golangci-lint/v2/cmd/golangci-lint
lint: $(GOLANGCI)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi
	$(GO) vet ./...
	cd pkg && $(GO) vet ./...
	cd pkg/testdata/shop && $(GO) vet ./...
	$(GOLANGCI_RUN) $(GOLANGCI) run ./...
	cd pkg && $(GOLANGCI_RUN) $(CURDIR)/$(GOLANGCI) run ./...
	cd pkg/testdata/shop && $(GOLANGCI_RUN) $(CURDIR)/$(GOLANGCI) run ./...

## validate: template.yaml through the real SAM translator and cfn-lint, as `make test` checks it
##   (needs Python 3: pip install aws-sam-translator==1.110.0 cfn-lint==1.51.0 awscli); see docs/deploy.md
.PHONY: validate
validate:
	@mkdir -p .local/sam
	python3 infra/sam/translate.py template.yaml >.local/sam/translated.json
	cfn-lint -- template.yaml .local/sam/translated.json
	@echo "validate: template.yaml translates ($$(grep -c '"Type": "AWS::' .local/sam/translated.json) resources, .local/sam/translated.json) and is clean under cfn-lint"

# ---------------------------------------------------------------------------------------------
# Application functions. SAM builds each function with `make build-<LogicalId>`
# (BuildMethod: makefile) into $(ARTIFACTS_DIR)/bootstrap: static, arm64, provided.al2023.
# `make build` builds every function for this machine into .local/build/<fn>/bootstrap.
# ---------------------------------------------------------------------------------------------
# Every directory under functions/ is a function; its logical id is its name in CamelCase with
# "Function" after it (note-tagger: NoteTaggerFunction), as infra/localcloud finds it too.
FUNCTIONS     := $(notdir $(wildcard functions/*))
LAMBDA_FLAGS  := -tags lambda.norpc -trimpath -ldflags "-s -w"
# Without ARTIFACTS_DIR (set by `sam build`) the target would write /bootstrap: refused.
LAMBDA_BUILD   = $(if $(ARTIFACTS_DIR),,$(error ARTIFACTS_DIR is not set: `sam build` sets it; by hand: make $@ ARTIFACTS_DIR=.local/artifacts/$(@:build-%=%), or `make build` for every function))GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap
SAM           ?= sam
# kebab turns NoteTagger into note-tagger; logical_id turns note-tagger into NoteTaggerFunction.
kebab          = $(shell echo '$(1)' | sed -E 's/([a-z0-9])([A-Z])/\1-\2/g' | tr A-Z a-z)
logical_id     = $(shell echo '$(1)' | sed -E 's/(^|-)([a-z])/\U\2/g')Function

.PHONY: build sam-build deploy $(addprefix invoke-,$(FUNCTIONS))

# build-<LogicalId> (build-ApiFunction, build-NoteTaggerFunction, ...): ./functions/<kebab name>.
# A pattern rule, so a new function needs no line here (and, as a pattern, it is not .PHONY).
build-%Function:
	$(LAMBDA_BUILD) ./functions/$(call kebab,$*)

## consumer: a new consumer of the application's events, NAME=word-count TYPE=note.created[,...]:
##   its handler and test (internal/<name without ->/), its main (functions/NAME/main.go), a sample
##   batch (events/NAME-batch.json) and its part of template.yaml (docs/consumer.md); a type no
##   producer publishes is refused (NEW_TYPE=1 accepts one whose producer is yet to come)
.PHONY: consumer remove-consumer
consumer:
	@test -n "$(NAME)" -a -n "$(TYPE)" || { echo "usage: make consumer NAME=<name> TYPE=<event type>[,<event type>...] [NEW_TYPE=1]"; exit 2; }
	@$(GO) run ./cmd/newconsumer -name '$(NAME)' -type '$(TYPE)'$(if $(NEW_TYPE), -new-type)

## remove-consumer: take a consumer make consumer wrote out again, NAME=word-count: its files and
##   its part of template.yaml (refused, changing nothing, where that part was edited past recognition)
remove-consumer:
	@test -n "$(NAME)" || { echo "usage: make remove-consumer NAME=<name>"; exit 2; }
	@$(GO) run ./cmd/newconsumer -remove -name '$(NAME)'

## build: every function's bootstrap for this machine, into .local/build/<fn>/bootstrap
build:
	@for fn in $(FUNCTIONS); do \
	  CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o .local/build/$$fn/bootstrap ./functions/$$fn || exit 1; \
	  echo "built .local/build/$$fn/bootstrap"; \
	done

# The SAM CLI builds and deploys (docs/deploy.md). SAM_MIN is its first release that bundles the
# SAM translator `make test` checks the template with (aws-sam-translator 1.110.0).
SAM_MIN     := 1.161.0
SAM_INSTALL := https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/install-sam-cli.html
SAM_ZIP      = https://github.com/aws/aws-sam-cli/releases/latest/download/aws-sam-cli-linux-$(if $(filter aarch64 arm64,$(shell uname -m)),arm64,x86_64).zip
.PHONY: sam-cli
sam-cli:
	@command -v $(SAM) >/dev/null || { echo "no SAM CLI: '$(SAM)' is not on PATH; building and deploying need the SAM CLI $(SAM_MIN) or later."; \
	  echo "Install it as $(SAM_INSTALL) says; on Linux:"; \
	  echo "  curl -sSLo sam.zip $(SAM_ZIP) && unzip -q sam.zip -d sam-installation && sudo ./sam-installation/install"; \
	  echo "then check it with: sam --version (docs/deploy.md)"; exit 1; } >&2
	@v=$$($(SAM) --version | sed -nE 's/.*version ([0-9][0-9.]*).*/\1/p'); \
	  if [ "$$(printf '%s\n' $(SAM_MIN) "$$v" | sort -V | head -n1)" != $(SAM_MIN) ]; then \
	    echo "the SAM CLI is $${v:-of an unknown version} ($$(command -v $(SAM))); this template needs $(SAM_MIN) or later: upgrade it as $(SAM_INSTALL) says" >&2; exit 1; fi

# CONFIG_ENV picks samconfig.toml's environment; CI (set by CI systems, or CI=1) deploys without prompts.
CONFIG_ENV ?= default
SAM_DEPLOY_FLAGS = --config-env $(CONFIG_ENV)$(if $(filter-out 0 false,$(CI)), --no-confirm-changeset --no-fail-on-empty-changeset)

## sam-build: the deployable artifacts in .aws-sam/ (needs the SAM CLI; without it, says how to install it)
sam-build: sam-cli
	$(SAM) build --config-env $(CONFIG_ENV)

## deploy: sam build, then sam deploy with samconfig.toml (needs the SAM CLI and AWS credentials);
##   CONFIG_ENV=prod for samconfig.toml's prod; CI=1 (or CI=true, as CI systems set it) asks nothing
deploy: sam-build
	$(SAM) deploy $(SAM_DEPLOY_FLAGS)

## webhook-secrets: the note-notifier's two SSM SecureStrings in samconfig.toml's region (CONFIG_ENV):
##   the webhook's https URL read from standard input (not echoed), a signing secret made by openssl
##   unless one exists; no value on a command line or in the output (docs/deploy.md)
WEBHOOK_URL_PARAMETER    ?= /onceflow/webhook/url
WEBHOOK_SECRET_PARAMETER ?= /onceflow/webhook/signing-secret
AWS ?= aws
# The region of samconfig.toml's [CONFIG_ENV.deploy.parameters].
DEPLOY_REGION = $(shell sed -n '/^\[$(CONFIG_ENV)\.deploy\.parameters\]/,/^\[/s/^region *= *"\([^"]*\)".*/\1/p' samconfig.toml)
.PHONY: webhook-secrets
webhook-secrets:
	@region='$(DEPLOY_REGION)'; test -n "$$region" || { echo "webhook-secrets: samconfig.toml gives [$(CONFIG_ENV).deploy.parameters] no region" >&2; exit 1; }; \
	  command -v $(AWS) >/dev/null || { echo "webhook-secrets: no AWS CLI ('$(AWS)' is not on PATH): https://docs.aws.amazon.com/cli/latest/userguide/getting-started-install.html" >&2; exit 1; }; \
	  read -rsp "webhook URL (https://...), stored as $(WEBHOOK_URL_PARAMETER) in $$region: " url; echo; \
	  case "$$url" in https://?*) ;; *) echo "webhook-secrets: the URL must start with https://; nothing stored" >&2; exit 1;; esac; \
	  v=$$(printf %s "$$url" | $(AWS) ssm put-parameter --region "$$region" --type SecureString --overwrite \
	    --name '$(WEBHOOK_URL_PARAMETER)' --value file:///dev/stdin --query Version --output text) || exit 1; \
	  echo "$(WEBHOOK_URL_PARAMETER) in $$region: stored, version $$v"; \
	  if $(AWS) ssm get-parameter --region "$$region" --name '$(WEBHOOK_SECRET_PARAMETER)' >/dev/null 2>&1; then \
	    echo "$(WEBHOOK_SECRET_PARAMETER) in $$region: kept, it exists (put-parameter --overwrite replaces it)"; exit 0; fi; \
	  secret=$$(openssl rand -hex 32) && [ $${#secret} -eq 64 ] || { echo "webhook-secrets: openssl made no secret; nothing stored" >&2; exit 1; }; \
	  v=$$(printf %s "$$secret" | $(AWS) ssm put-parameter --region "$$region" --type SecureString \
	    --name '$(WEBHOOK_SECRET_PARAMETER)' --value file:///dev/stdin --query Version --output text) || exit 1; \
	  echo "$(WEBHOOK_SECRET_PARAMETER) in $$region: a new 32-byte secret, version $$v (the receiver reads it with get-parameter --with-decryption)"

## invoke-<fn>: sam local invoke of one function on a sample event (needs the SAM CLI and Docker);
## EVENT=events/<file>.json picks another sample
invoke-api:          EVENT ?= events/api-create-note.json
invoke-outbox-relay: EVENT ?= events/outbox-relay-insert.json
$(addprefix invoke-,$(FUNCTIONS)): EVENT ?= events/$(@:invoke-%=%)-batch.json
$(addprefix invoke-,$(FUNCTIONS)): FN = $(call logical_id,$(@:invoke-%=%))
$(addprefix invoke-,$(FUNCTIONS)): sam-build
	$(SAM) local invoke $(FN) -e $(EVENT)

# ---- local cloud: make up / make down / make invoke --------------------------------
# The local cloud runs template.yaml on DynamoDB Local, fauxqs and the Lambda Runtime Interface
# Emulator (see infra/localcloud). State, logs and builds live in .local/ (git-ignored).
#   make up                                  start everything; writes .local/endpoints.json
#   make up ENVS=LedgerFunction=3,api=1      execution environments per function (logical id or
#                                            short name; an unknown one is refused with the list)
#   make up SHARDS=4                         4 shards per DynamoDB stream (by partition key), as on AWS
#   make up PARAMS="LogLevel=debug"          template parameter overrides (space-separated), checked
#                                            against the template's AllowedValues and constraints
#   make up TEMPLATE=infra/localcloud/testdata/template.yaml   another SAM template
#   make invoke FN=<name> EVENT=events/x.json  invoke one function on the running cloud
#   make logs FN=<name> [FOLLOW=1]           a function's log lines, readable (.local/logs/<Fn>-<n>.log)
#   make scan [TABLE=AppTable]               a table's items, or every table with its item count
#   make queue [Q=LedgerDeadLetterQueue]     a queue's messages (not received), or every queue's counts
#   make down                                stop exactly what `make up` started
TEMPLATE   ?= template.yaml
LOCALCLOUD := .local/bin/localcloud

.PHONY: up down invoke logs scan queue run $(LOCALCLOUD)

$(LOCALCLOUD):
	@$(GO) build -o $@ ./infra/cmd/localcloud

## up: start the local cloud from template.yaml (installs emulators, builds functions)
up: $(LOCALCLOUD)
	$(LOCALCLOUD) up -template $(TEMPLATE) $(if $(ENVS),-envs $(ENVS))$(if $(SHARDS), -shards $(SHARDS)) $(foreach p,$(PARAMS),-param $(p))$(if $(UNGATED), -ungated)

## run: the local cloud plus the demo workload, its summary and invariants, then down
##   (NOTES=200 CREDITS=1000 ACCOUNTS=50; KEEP=1 keeps it up until Ctrl-C or `make down`;
##   SHARDS=4 splits each DynamoDB stream into 4 shards by partition key, as AWS does;
##   every call is authorised by the gatekeeper; UNGATED=1 turns it off, only to measure its cost)
NOTES    ?= 200
CREDITS  ?= 1000
ACCOUNTS ?= 50
run: $(LOCALCLOUD)
	$(LOCALCLOUD) run -template $(TEMPLATE) -notes $(NOTES) -movements $(CREDITS) -accounts $(ACCOUNTS)$(if $(KEEP), -keep)$(if $(ENVS), -envs $(ENVS))$(if $(SHARDS), -shards $(SHARDS)) $(foreach p,$(PARAMS),-param $(p))$(if $(UNGATED), -ungated)

## chaos: the run workload at scale with faults injected between every function and DynamoDB/SQS
##   (throttling, 500s, TransactionConflict, connection resets before and after the answer,
##   latency), environments killed during and after invocations, POISON=3 accounts recovered by
##   the runbook with the CLI while traffic goes on (docs/drill.md), the dead-letter queues redriven;
##   the summary with the faults by kind, the invariants (non-zero exit on a FAIL), .local/report.html.
##   EVENTS=20000 (EVENTS=100000 works); CHAOS="-kill-during 0.05 ..." passes rate flags
EVENTS ?= 20000
.PHONY: chaos
chaos: $(LOCALCLOUD)
	@$(GO) build -o $(ONCEFLOW) ./cmd/onceflow
	$(LOCALCLOUD) chaos -cli $(ONCEFLOW) -template $(TEMPLATE) -events $(EVENTS)$(if $(POISON), -poison $(POISON))$(if $(ENVS), -envs $(ENVS))$(if $(SHARDS), -shards $(SHARDS)) $(foreach p,$(PARAMS),-param $(p)) $(CHAOS)

## down: stop the local cloud
down: $(LOCALCLOUD)
	$(LOCALCLOUD) down

## invoke: invoke FN with EVENT (a JSON file) on the running local cloud; says each message's outcome
invoke: $(LOCALCLOUD)
	@test -n "$(FN)" -a -n "$(EVENT)" || { echo "usage: make invoke FN=<function> EVENT=events/<file>.json"; exit 2; }
	@$(LOCALCLOUD) invoke $(FN) $(EVENT)

## logs: FN's log lines (every environment, time order, no emulator lines); FOLLOW=1 follows them
logs: $(LOCALCLOUD)
	@test -n "$(FN)" || { echo "usage: make logs FN=<function> [FOLLOW=1]"; exit 2; }
	@$(LOCALCLOUD) logs $(if $(FOLLOW),-f) $(FN)

## scan: TABLE's items as JSON lines (LIMIT=50), or every table of the running cloud with its count
LIMIT ?= 50
scan: $(LOCALCLOUD)
	@$(LOCALCLOUD) scan -limit $(LIMIT) $(TABLE)

## queue: Q's messages without receiving them, or every queue of the running cloud with its counts
queue: $(LOCALCLOUD)
	@$(LOCALCLOUD) queue $(Q)

## send: send BODY as written to queue Q of the running cloud (GROUP=poison on a FIFO queue, a fresh
##   deduplication id each time): a bad message to follow the runbook from its first step
.PHONY: send
send: $(LOCALCLOUD)
	@$(LOCALCLOUD) send $(if $(GROUP),-group '$(GROUP)') '$(Q)' '$(BODY)'

# The report's browser test (infra/workload/browser_test.go) looks at the report in Debian's
# Chromium: installed when it is missing (as root, or through sudo).
CHROMIUM ?= /usr/bin/chromium
test: $(CHROMIUM)
$(CHROMIUM):
	@echo "installing Chromium from Debian's packages, for the report's browser test"
	@$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq chromium >/dev/null || \
	  { echo "could not install Chromium: run apt-get update && apt-get install -y chromium as root"; exit 1; }

# The recovery protocol's model (pkg/idempotency/model, docs/recovery-model.md) is checked by
# SPIN, from Debian's packages: installed when it is missing (as root, or through sudo).
SPIN ?= /usr/bin/spin
test: $(SPIN)
$(SPIN):
	@echo "installing SPIN from Debian's packages, for the recovery protocol's model"
	@$(if $(filter 0,$(shell id -u)),,sudo) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(if $(filter 0,$(shell id -u)),,sudo) apt-get install -y -qq spin gcc >/dev/null || \
	  { echo "could not install SPIN: run apt-get update && apt-get install -y spin gcc as root"; exit 1; }

## model: the recovery protocol's model checked exactly, safety and liveness, in every scenario,
##   two searches at once under nice, each with 9 GB at most, and the matrix printed (each check's
##   states, time, memory); `make test` checks a set of it (docs/recovery-model.md)
.PHONY: model
model: $(SPIN)
	cd pkg && MODEL=all nice -n 19 $(GO) test -count=1 -v -timeout 3h -parallel 3 -run '^TestModel_(recovery_protocol|split_.*)$$' ./idempotency/model/ | \
	  grep -E '^(=== RUN|--- |\s+(model|split)_test.go:[0-9]+: |\s+MSC: |ok|FAIL|PASS|the model|check |scen[0-9]|searches )' ; exit $${PIPESTATUS[0]}

## break: the Go counterpart of the model's BREAK list: each step of the recovery protocol broken
##   in turn in a copy of its code (go test -overlay, the code on disk untouched), every test of the
##   package that owns it run, each failing test printed, and the score (docs/recovery-model.md);
##   `make test` runs the tests each break names
.PHONY: break
break:
	cd pkg && BREAK=all $(GO) test -count=1 -v -timeout 1h -run '^TestBreak_each_step_fails_a_test_in_its_own_package$$' ./internal/breaks/ | \
	  grep -E '^(--- |\s+run_test.go:[0-9]+: |\s+(S[0-9]+|C[0-9]|leave) |ok|FAIL|PASS)' ; exit $${PIPESTATUS[0]}

# ---- the operator CLI: make ops ARGS="..." ----------------------------------------
# .local/bin/onceflow is the binary (cmd/onceflow); `make ops` runs it on the local cloud
# (--local), AWS=1 against AWS with the default credential chain. Examples (docs/cli.md, docs/runbook.md):
#   make ops ARGS="dlq list --queue LedgerDeadLetterQueue"
#   make ops ARGS="dlq redrive --queue LedgerDeadLetterQueue --dry-run"
#   make ops ARGS="record get --consumer ledger <event id>"
#   make ops ARGS="outbox republish --since 2h"
ONCEFLOW := .local/bin/onceflow

.PHONY: ops $(ONCEFLOW)

$(ONCEFLOW):
	@$(GO) build -o $@ ./cmd/onceflow

## ops: the operator CLI with ARGS, on the local cloud (AWS=1: on AWS); ARGS=--help lists its commands
ops: $(ONCEFLOW)
	@$(ONCEFLOW) $(if $(ARGS),$(ARGS),--help)$(if $(AWS),, --local)
