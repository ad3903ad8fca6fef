package idempotency_test

import (
	"errors"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/onceflow/onceflow/pkg/idempotency"
	"github.com/onceflow/onceflow/pkg/internal/applytest"
	"github.com/onceflow/onceflow/pkg/internal/engine"
)

// fixture is applytest's fixture, with what this package's tests add to it.
type fixture struct{ *applytest.Fixture }

func newFixture(t *testing.T) *fixture { return &fixture{applytest.New(t)} }

// An access denial is never permanent, however it is marked: it is the deployment's fault, and
// the message is applied once the permission is granted.
func TestIsPermanent_never_takes_an_access_denial_for_permanent(t *testing.T) {
	denial := &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "TransactWriteItems", Err: &smithy.GenericAPIError{
		Code: "AccessDeniedException", Message: "User: arn:aws:sts::000000000000:assumed-role/r/f is not authorized to perform: dynamodb:PutItem"}}
	if idempotency.IsPermanent(idempotency.Permanent(denial)) {
		t.Errorf("a denial marked permanent is permanent; want it never permanent")
	}
	if !idempotency.IsPermanent(idempotency.Permanent(errors.New("bad data"))) {
		t.Errorf("an error marked permanent is not permanent")
	}
}

// engineOf is c's engine, for what a port reaches only through a batch: holding a group,
// counting a failed attempt, as a test sets them up.
func engineOf(c *idempotency.Consumer) *engine.Consumer { return c.Engine().(*engine.Consumer) }
