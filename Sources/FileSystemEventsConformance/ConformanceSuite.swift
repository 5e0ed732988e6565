public enum ConformanceSuite {}
