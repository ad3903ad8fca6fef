package localcloud

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// startChaos starts the fault-injecting proxies in front of DynamoDB and SQS when
// Config.Chaos injects request faults; functions are then given their endpoints.
func (c *Cloud) startChaos() error {
	if !c.cfg.Chaos.Enabled() {
		return nil
	}
	c.chaos = newChaos(c.cfg.Chaos)
	if !c.cfg.Chaos.proxied() {
		return nil
	}
	var err error
	if c.fnDynamoDB, err = c.serve(newFaultProxy("dynamodb", c.endpoints.DynamoDB, c.chaos)); err != nil {
		return err
	}
	c.fnSQS, err = c.serve(newFaultProxy("sqs", c.endpoints.SQS, c.chaos))
	return err
}

// functionEndpoints returns the DynamoDB and SQS endpoints functions are given: the fault
// proxies under Chaos, else the emulators.
func (c *Cloud) functionEndpoints() (ddb, sqs string) {
	ddb, sqs = c.endpoints.DynamoDB, c.endpoints.SQS
	if c.fnDynamoDB != "" {
		ddb = c.fnDynamoDB
	}
	if c.fnSQS != "" {
		sqs = c.fnSQS
	}
	return ddb, sqs
}

// killDuring arms, for a Chaos.KillDuring share of invocations, a kill of env a random moment
// into the invocation; disarm stops it and reports whether it fired (then the invocation's
// answer, if one came, is dropped: the kill may have raced with it).
func (c *Cloud) killDuring(env *environment) (disarm func() bool) {
	if c.chaos == nil || c.chaos.cfg.KillDuring <= 0 || c.chaos.float() >= c.chaos.cfg.KillDuring {
		return func() bool { return false }
	}
	pid := env.proc.pid()
	t := time.AfterFunc(c.chaos.duration(c.chaos.cfg.KillWindow), func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	return func() bool {
		if t.Stop() {
			return false
		}
		c.chaos.count(FaultKillDuring)
		return true
	}
}

// killAfter reports whether, for a Chaos.KillAfter share of successful invocations, the
// environment is to be killed after its invocation returned, and counts it.
func (c *Cloud) killAfter() bool {
	if c.chaos == nil || c.chaos.cfg.KillAfter <= 0 || c.chaos.float() >= c.chaos.cfg.KillAfter {
		return false
	}
	c.chaos.count(FaultKillAfterAck)
	return true
}

// Outage cuts every function off service ("dynamodb" or "sqs") until end is called: each of
// their requests to it is answered 500 InternalFailure, as in a regional outage, and counted
// in Stats.Faults as FaultOutage. The cloud's own pollers and Endpoints are not cut off. It
// needs Config.Chaos.Outages (or any request fault rate).
func (c *Cloud) Outage(service string) (end func(), err error) {
	if c.chaos == nil || c.fnSQS == "" {
		return nil, errors.New("outage: the fault proxies are not running (set Config.Chaos.Outages)")
	}
	if service != "dynamodb" && service != "sqs" {
		return nil, fmt.Errorf("outage: service %q, want dynamodb or sqs", service)
	}
	c.chaos.setDown(service, true)
	return func() { c.chaos.setDown(service, false) }, nil
}

// Faults returns the faults injected so far by kind (Config.Chaos); nil without chaos.
func (c *Cloud) Faults() map[string]int { return c.chaos.snapshot() }
