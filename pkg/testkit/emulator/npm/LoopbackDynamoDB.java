// LoopbackDynamoDB runs Amazon DynamoDB Local bound to 127.0.0.1. Its own main binds every
// interface (its Jetty server is built from a port alone, and it has no host option), so this
// launcher builds the server with DynamoDB Local's own command-line parser, sets the host of
// its connectors to loopback, and starts it. Run it in Java's source-file mode:
//
//   java -Djava.library.path=$LIB/DynamoDBLocal_lib -cp $LIB/DynamoDBLocal.jar \
//     LoopbackDynamoDB.java -inMemory -sharedDb -disableTelemetry -port PORT
//
// Reflection keeps it free of compile-time dependencies: it needs the JDK (17 or newer) only.
public class LoopbackDynamoDB {
  public static void main(String[] args) throws Exception {
    Class<?> runner = Class.forName("software.amazon.dynamodb.services.local.main.ServerRunner");
    Object proxy = runner.getMethod("createServerFromCommandLineArgs", String[].class).invoke(null, (Object) args);
    java.lang.reflect.Field f = proxy.getClass().getDeclaredField("server");
    f.setAccessible(true);
    Object server = f.get(proxy);
    Object[] connectors = (Object[]) server.getClass().getMethod("getConnectors").invoke(server);
    if (connectors.length == 0) throw new IllegalStateException("DynamoDB Local has no connector to bind to loopback");
    for (Object c : connectors) c.getClass().getMethod("setHost", String.class).invoke(c, "127.0.0.1");
    proxy.getClass().getMethod("start").invoke(proxy);
  }
}
