// The demo session's workspace: a tiny program with an obvious bug for the agent to fix.
function greet(name) {
  return "Hello, " + nme + "!";
}

console.log(greet("world"));
