# The dashboard module, planned against a mocked provider: one page of the pipeline's metrics,
# the fleet's only with runners, and a budget that mails someone.

mock_provider "aws" {
  override_during = plan
}

variables {
  name           = "pf"
  region         = "us-east-1"
  queue_names    = { ingest = "pf-ingest", chunks = "pf-chunks", completion = "pf-completion" }
  function_names = { splitter = "pf-splitter", completion = "pf-completion" }
  alarm_arns     = ["arn:aws:cloudwatch:us-east-1:123456789012:alarm:pf-oldest-chunk-age"]
}

run "without_runners" {
  command = plan

  module {
    source = "./modules/dashboard"
  }

  assert {
    condition = [for w in jsondecode(output.dashboard_body).widgets : w.properties.title] == [
      "Messages waiting", "Age of the oldest message (s)", "Jobs ended, by status", "Function errors and throttles", "Alarms",
    ]
    error_message = "without runners: the queues, the jobs, the functions and the alarms"
  }

  assert {
    condition     = [for m in jsondecode(output.dashboard_body).widgets[0].properties.metrics : m[3]] == ["pf-ingest", "pf-chunks", "pf-completion"]
    error_message = "each queue's depth, by its name"
  }

  assert {
    condition     = length(jsondecode(output.dashboard_body).widgets[2].properties.metrics) == 6 && jsondecode(output.dashboard_body).widgets[2].properties.metrics[0][1] == "Jobs_done"
    error_message = "jobs by status (done, partial, failed) from both functions that end jobs"
  }

  assert {
    condition     = output.budget_name == null
    error_message = "no budget unless asked for"
  }
}

run "with_runners_and_a_budget" {
  command = plan

  module {
    source = "./modules/dashboard"
  }

  variables {
    cluster_name           = "pf"
    service_name           = "pf"
    autoscaling_group_name = "pf-runners"
    monthly_budget_usd     = 300
    budget_emails          = ["ops@example.com"]
  }

  assert {
    condition     = contains([for w in jsondecode(output.dashboard_body).widgets : w.properties.title], "GPU utilisation (%, the runners' average)") && contains([for w in jsondecode(output.dashboard_body).widgets : w.properties.title], "GPU instances")
    error_message = "with runners: tasks, instances and GPU utilisation"
  }

  assert {
    condition = (
      aws_budgets_budget.this[0].limit_amount == "300" &&
      one(aws_budgets_budget.this[0].cost_filter).values == tolist(["user:Deployment$pf"]) &&
      length(aws_budgets_budget.this[0].notification) == 3 &&
      alltrue([for n in aws_budgets_budget.this[0].notification : n.subscriber_email_addresses == toset(["ops@example.com"])])
    )
    error_message = "the budget: the deployment's tagged cost, mailed at 80% and 100% actual and 100% forecast"
  }
}

run "a_budget_that_mails_no_one_refused" {
  command = plan

  module {
    source = "./modules/dashboard"
  }

  variables {
    monthly_budget_usd = 300
  }

  expect_failures = [var.budget_emails]
}
