// iamsim.mjs decides IAM requests with @cloud-copilot/iam-simulate (pinned in package.json),
// the independent evaluator the gatekeeper's is checked against (infra/iam's conformance test).
//
//   node infra/iamsim.mjs <cases.json >decisions.json
//
// It reads one JSON array of cases from standard input, each
//   {"principal": ARN, "action": "dynamodb:GetItem", "resource": ARN or "*", "account": "000000000000",
//    "policies": [{"name": ..., "document": {...}}], "context": {"aws:PrincipalArn": ["..."], ...}}
// and writes one JSON array of decisions in the same order, each
//   {"result": "Allowed" | "ImplicitlyDenied" | "ExplicitlyDenied", "ignored": [context keys the
//    action does not have], "error": "..." when the simulator refused the case}.
// The principal's own condition keys (aws:PrincipalArn, aws:PrincipalAccount) it derives from
// the principal's ARN with the simulator's library, in place of those of the case: so the
// gatekeeper's are checked too. One process decides every case: starting Node once per case
// would cost more than the cases.
import { runSimulation } from '@cloud-copilot/iam-simulate'
import { convertAssumedRoleArnToRoleArn, isAssumedRoleArn } from '@cloud-copilot/iam-utils'

const chunks = []
for await (const chunk of process.stdin) chunks.push(chunk)
const cases = JSON.parse(Buffer.concat(chunks).toString('utf8'))

// principalKeys replaces the principal's keys of a case's context with the simulator's own.
function principalKeys(c) {
  const context = {}
  for (const [k, v] of Object.entries(c.context ?? {})) {
    const key = k.toLowerCase()
    if (key !== 'aws:principalarn' && key !== 'aws:principalaccount') context[k] = v
  }
  const arn = isAssumedRoleArn(c.principal) ? convertAssumedRoleArnToRoleArn(c.principal) : c.principal
  context['aws:PrincipalArn'] = [arn]
  context['aws:PrincipalAccount'] = [arn.split(':')[4]]
  return context
}

async function decide(c) {
  const simulation = {
    identityPolicies: c.policies.map((p) => ({ name: p.name, policy: p.document })),
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    request: {
      principal: c.principal,
      action: c.action,
      resource: { resource: c.resource, accountId: c.account },
      contextVariables: principalKeys(c)
    }
  }
  const out = await runSimulation(simulation, {})
  if (out.resultType === 'error') {
    return { error: JSON.stringify(out.errors) }
  }
  const ignored = out.resultType === 'single' ? (out.result.ignoredContextKeys ?? []) : []
  return { result: out.overallResult, ignored }
}

const decisions = []
for (const c of cases) {
  try {
    decisions.push(await decide(c))
  } catch (err) {
    decisions.push({ error: String(err && err.message ? err.message : err) })
  }
}
process.stdout.write(JSON.stringify(decisions))
